// Starting the XSK frame sender's loop: a persistent kernel (returns at once; it runs until
// XskSendControl::stop) or the calling CPU thread (returns when stopped).
#pragma once

#include <cuda_runtime_api.h>

#include "gpu/xsk_send_shared.h"

namespace netdaq::gpu::detail {

void launch_xsk_sender(const XskSendParams& p, cudaStream_t stream);  // throws Error
void run_xsk_sender_on_cpu(const XskSendParams& p);

}  // namespace netdaq::gpu::detail
