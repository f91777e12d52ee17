// The rdma engine as the core sees it. Its runtime (rdma-core) is not written yet: the name is
// known so that a config naming it is told the engine is not built in, rather than unknown;
// socket: options on an rdma interface are ignored, as documented.
#include "core/engine_descriptor.h"

namespace netdaq::detail {

void describe_rdma_engine() {
  EngineDescriptor d;
  d.name = "rdma";
  d.ignores_blocks = {"socket"};
  describe_engine(std::move(d));
}

}  // namespace netdaq::detail
