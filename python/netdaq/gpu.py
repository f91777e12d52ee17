"""netdaq.gpu: rx queue packets reordered into frames in GPU memory, handed to PyTorch or
CuPy through DLPack without a copy (docs/python.md, docs/gpu.md)."""
from ._netdaq import gpu as _gpu

FramePipeline = _gpu.FramePipeline
Frame = _gpu.Frame
built_in = _gpu.built_in
device_count = _gpu.device_count
devices = _gpu.devices
unavailable_reason = _gpu.unavailable_reason

__all__ = ["FramePipeline", "Frame", "built_in", "device_count", "devices", "unavailable_reason"]
