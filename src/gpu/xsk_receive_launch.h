// Starting the XSK frame receiver's loop: a persistent kernel (returns at once; it runs until
// XskControl::stop) or the calling CPU thread (returns when stopped).
#pragma once

#include <cuda_runtime_api.h>

#include "gpu/xsk_receive_shared.h"

namespace netdaq::gpu::detail {

void launch_xsk_receiver(const XskParams& p, cudaStream_t stream);  // throws Error
void run_xsk_receiver_on_cpu(const XskParams& p);

}  // namespace netdaq::gpu::detail
