// Counters as plain Python dicts (the C++ structs' field names as keys).
#pragma once

#include "bindings.h"
#include "netdaq/gpu.h"
#include "netdaq/stats.h"

namespace netdaq::python {

py::dict to_dict(const QueueStats& s);
py::dict to_dict(const FlowStats& s);
py::dict to_dict(const gpu::PipelineStats& s);
py::dict to_dict(const gpu::StreamStats& s);
py::dict to_dict(const gpu::FrameInfo& i);

}  // namespace netdaq::python
