"""netdaq from Python: packets from NICs into CPU and GPU memory, read in place.

    import netdaq
    with netdaq.Session(netdaq.Config.load("examples/loopback.yaml")) as s:
        q = s.rx_queue("receiver")
        with q.poll() as burst:
            for p in burst:
                p.payload          # a read-only NumPy view of the packet's buffer, no copy

docs/python.md has the whole API; examples/python/ has programs.
"""
import json as _json

from ._netdaq import (  # noqa: F401  (the public API)
    Config,
    ConfigError,
    ConfigIssue,
    Error,
    FieldPlacement,
    Packet,
    PacketField,
    ReleasedError,
    ReorderConfig,
    RoceOptions,
    RoceQueuePair,
    RxBurst,
    RxQueue,
    Session,
    SpeadOptions,
    TxBurst,
    TxQueue,
    VideoOptions,
    Vita49Options,
    __version__,
    engines,

    validate,
)
from . import gpu  # noqa: F401,E402

# netdaq.fleet (docs/fleet.md): only where the library was built with UCX.
from . import _netdaq as _ext  # noqa: E402

if hasattr(_ext, "fleet"):
    import sys as _sys

    fleet = _ext.fleet
    _sys.modules[__name__ + ".fleet"] = fleet  # `import netdaq.fleet` and `from netdaq.fleet import ...` work


def _config_from_dict(d, source="<dict>"):
    """A Config from a dict shaped like the YAML file (keys as in docs/config.md).

    JSON is YAML, so the dict goes through the same loader and validation as a file;
    issues name the key path (interfaces[0].rx.queues[0].batch_size) and a line of the
    dict written out as indented JSON.
    """
    return Config.from_yaml(_json.dumps(d, indent=2), source)


Config.from_dict = staticmethod(_config_from_dict)

__all__ = [
    "Config", "ConfigError", "ConfigIssue", "Error", "FieldPlacement", "Packet", "PacketField", "ReleasedError",
    "ReorderConfig", "RoceOptions", "RoceQueuePair", "RxBurst", "RxQueue", "Session", "SpeadOptions", "TxBurst", "TxQueue", "VideoOptions", "Vita49Options",
    "__version__", "engines", "gpu", "validate",
]
if "fleet" in globals():
    __all__.append("fleet")
