"""netdaq.gpu: rx queue packets reordered into frames in GPU memory, handed to PyTorch or
CuPy through DLPack without a copy (docs/python.md, docs/gpu.md)."""
from ._netdaq import gpu as _gpu

FramePipeline = _gpu.FramePipeline
Frame = _gpu.Frame
built_in = _gpu.built_in
device_count = _gpu.device_count
devices = _gpu.devices
unavailable_reason = _gpu.unavailable_reason
# The keys of FramePipeline.stats(), of each FramePipeline.stream_stats() entry and of Frame.info.
PIPELINE_STATS_KEYS = _gpu.PIPELINE_STATS_KEYS
STREAM_STATS_KEYS = _gpu.STREAM_STATS_KEYS
FRAME_INFO_KEYS = _gpu.FRAME_INFO_KEYS

__all__ = ["FramePipeline", "Frame", "built_in", "device_count", "devices", "unavailable_reason",
           "PIPELINE_STATS_KEYS", "STREAM_STATS_KEYS", "FRAME_INFO_KEYS"]
