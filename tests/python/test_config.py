"""Config from files, YAML text and dicts; ConfigError with the file, line, key and what is
allowed; validate(); the version and engines of the build."""
import os
import pathlib
import re
import subprocess

import pytest

import netdaq
from conftest import free_udp_port, loopback_config

SOURCE = pathlib.Path(os.environ.get("NETDAQ_SOURCE_DIR", pathlib.Path(__file__).parents[2]))

BAD = """\
memory_regions:
  - {name: bufs, kind: host, buf_size: 2048, num_bufs: 1024}
interfaces:
  - name: receiver
    engine: socket
    address: udp://127.0.0.1:47000
    rx:
      queues:
        - {id: 0, batch_size: 0, memory_regions: [bufs]}
"""


def test_every_example_loads():
    for path in sorted((SOURCE / "examples").glob("*.yaml")):
        try:
            cfg = netdaq.Config.load(path)
        except netdaq.ConfigError as e:  # an engine this build lacks: said, and nothing else wrong
            assert all("is not built into this netdaq" in i.message for i in e.issues), e.issues
            continue
        assert cfg.source.endswith(path.name) and cfg.interfaces


def test_config_error_names_file_line_key_and_what_is_allowed(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text(BAD)
    with pytest.raises(netdaq.ConfigError) as e:
        netdaq.Config.load(f)
    issue = e.value.issues[0]
    assert isinstance(e.value, netdaq.Error) and e.value.code == "invalid_config"
    assert issue.file == str(f) and issue.line == 9
    assert issue.key == "interfaces[0].rx.queues[0].batch_size" and issue.value == "0"
    assert issue.message
    assert str(issue).startswith(f"{f}:9:")
    assert f"{f}:9:" in str(e.value)
    assert [str(i) for i in netdaq.validate(f)] == [str(i) for i in e.value.issues]


def test_from_yaml_names_its_source():
    with pytest.raises(netdaq.ConfigError) as e:
        netdaq.Config.from_yaml(BAD, "sensor.yaml")
    assert e.value.issues[0].file == "sensor.yaml" and e.value.issues[0].line == 9


def test_unknown_key_is_refused_with_its_line():
    with pytest.raises(netdaq.ConfigError) as e:
        netdaq.Config.from_yaml(BAD.replace("engine: socket", "engine: socket\n    bogus_key: 1"))
    assert any(i.key.endswith("bogus_key") and i.line == 6 for i in e.value.issues), e.value.issues


def test_from_dict_goes_through_the_same_validation():
    d = loopback_config(free_udp_port())
    cfg = netdaq.Config.from_dict(d)
    assert cfg.interfaces == ["receiver", "sender"] and cfg.memory_regions == ["rx_bufs", "tx_bufs"]
    assert cfg.validate() == []
    d["interfaces"][0]["rx"]["queues"][0]["batch_size"] = 0
    with pytest.raises(netdaq.ConfigError) as e:
        netdaq.Config.from_dict(d)
    assert e.value.issues[0].key == "interfaces[0].rx.queues[0].batch_size"
    assert e.value.issues[0].file == "<dict>" and e.value.issues[0].line > 0


def test_validate_of_a_good_file_is_empty():
    assert netdaq.validate(SOURCE / "examples" / "loopback.yaml") == []


def test_reorder_config_keys_and_names():
    r = netdaq.ReorderConfig(packets_per_frame=64, payload_size=1024, output="fp16", staging="copy")
    assert (r.packets_per_frame, r.payload_size, r.output, r.staging) == (64, 1024, "fp16", "copy")
    assert r.persistent_sms is None  # auto: half the GPU's SMs
    r.launch, r.persistent_sms = "persistent", 16
    assert (r.launch, r.persistent_sms) == ("persistent", 16)
    with pytest.raises(ValueError, match="allowed are raw, int4, int8, int16, fp16, bf16, fp32"):
        r.output = "fp64"
    with pytest.raises(TypeError, match="no key 'packets'"):
        netdaq.ReorderConfig(packets=3)
    cfg = netdaq.Config.load(SOURCE / "examples" / "gpu-frames.yaml")
    first = cfg.reorder(cfg.interfaces[0])
    assert first.packets_per_frame > 0
    with pytest.raises(netdaq.Error, match="rx.reorder entries"):
        cfg.reorder(cfg.interfaces[0], 99)


def span_config(reorder):
    d = loopback_config(free_udp_port(), rx_bufs=8192)  # ring + bursts the GPU holds
    d["memory_regions"][0].update(kind="pinned", gpu=0)
    d["interfaces"][0]["rx"]["reorder"] = [dict(queue=0, gpu=0, staging="copy", **reorder)]
    return d


def test_span_mode_keys_pass_through_from_dicts():
    """The span modes' keys (docs/gpu.md, "Frames from the sensor's headers") go from a dict
    through the YAML loader to Config.reorder(), and ReorderConfig takes them as keywords."""
    cfg = netdaq.Config.from_dict(span_config(dict(
        mode="spead", spead={"stream_item": 0x1600}, frame_bytes=1 << 20, granule=8, max_streams=4,
        max_open_frames=2, frame_buffers=16)))
    r = cfg.reorder("receiver")
    assert (r.mode, r.spead.stream_item, r.frame_bytes, r.granule, r.max_streams) == ("spead", 0x1600, 1 << 20, 8, 4)

    cfg = netdaq.Config.from_dict(span_config(dict(
        mode="fields", payload_offset=8, payload_size=1024, packets_per_frame=64,
        fields={"frame": {"offset": 0, "bits": 32, "byte_order": "little"},
                "index": {"offset": 4, "bits": 16, "byte_order": "little"},
                "marker": {"offset": 6, "bits": 16, "byte_order": "little", "mask": 1, "shift": 0}})))
    f = cfg.reorder("receiver").fields
    assert (f.frame.offset, f.frame.bits, f.frame.byte_order, f.frame.declared) == (0, 32, "little", True)
    assert (f.index.offset, f.marker.mask, f.byte_offset.declared, f.stream.declared) == (4, 1, False, False)

    cfg = netdaq.Config.from_dict(span_config(dict(
        mode="vita49", vita49={"samples_per_frame": 65536, "sample_bytes": 4, "sample_rate": 100000000},
        input="int16", sample_byte_order="big", output="fp32")))
    v = cfg.reorder("receiver").vita49
    assert (v.samples_per_frame, v.sample_bytes, v.sample_rate) == (65536, 4, 100000000)

    # The same keys as keywords: blocks as dicts or objects, read and changed in place.
    r = netdaq.ReorderConfig(mode="fields", payload_size=1024, packets_per_frame=64,
                             fields={"frame": {"bits": 32}, "index": netdaq.PacketField(offset=4, bits=16)})
    assert r.fields.frame.bits == 32 and r.fields.index.offset == 4 and r.fields.frame.mask == (1 << 64) - 1
    r.fields.marker = {"offset": 6, "bits": 16, "mask": 0x1}
    r.fields.marker.byte_order = "little"
    assert (r.fields.marker.offset, r.fields.marker.mask, r.fields.marker.byte_order) == (6, 1, "little")
    r = netdaq.ReorderConfig(mode="vita49", vita49=netdaq.Vita49Options(samples_per_frame=1024), max_streams=2)
    assert (r.vita49.samples_per_frame, r.vita49.sample_bytes, r.max_streams) == (1024, 4, 2)
    assert netdaq.ReorderConfig(spead=netdaq.SpeadOptions(stream_item=7)).spead.stream_item == 7
    assert "spead" in repr(netdaq.ReorderConfig(mode="spead", frame_bytes=4096))
    with pytest.raises(TypeError, match="PacketField has no key 'width'"):
        netdaq.ReorderConfig(fields={"frame": {"width": 32}})
    with pytest.raises(ValueError, match="allowed are sequence, arrival, immediate, fields, spead, vita49"):
        netdaq.ReorderConfig(mode="chdr")


def test_roce_sw_keys_pass_through_from_dicts():
    """Mode roce (docs/roce-software.md): the queue pairs from a dict through the loader, and
    RoceOptions / RoceQueuePair as keywords, changed in place."""
    cfg = netdaq.Config.from_dict(span_config(dict(
        mode="roce", max_streams=2,
        roce={"check_icrc": False, "mtu": 512, "metadata_bytes": 128,
              "queue_pairs": [{"qpn": 0x100, "rkey": 0x1234, "base_va": 1 << 40, "slots": 2, "slot_size": 4096},
                              {"qpn": 0x101, "slot_size": 4096, "psn": 0xFFFFFF}]})))
    o = cfg.reorder("receiver").roce
    assert (o.check_icrc, o.mtu, o.metadata_bytes, o.psn_window) == (False, 512, 128, 1024)
    a, b = o.queue_pairs
    assert (a.qpn, a.rkey, a.base_va, a.slots, a.stride, a.slot_size) == (0x100, 0x1234, 1 << 40, 2, 0, 4096)
    assert (b.qpn, b.psn, b.slots) == (0x101, 0xFFFFFF, 1)

    r = netdaq.ReorderConfig(mode="roce", roce={"queue_pairs": [netdaq.RoceQueuePair(qpn=0x100, slot_size=8192)]})
    r.roce.queue_pairs[0].rkey = 7
    assert (r.mode, r.roce.check_icrc, r.roce.queue_pairs[0].rkey) == ("roce", True, 7)
    assert r.frames == "gpu"
    r.frames = "host"  # assembled by HostFrameAssembler, no GPU
    assert r.frames == "host"
    r.roce.queue_pairs = [{"qpn": 0x200}, {"qpn": 0x201}]
    assert [q.qpn for q in r.roce.queue_pairs] == [0x200, 0x201]
    assert "qpn 0x200" in repr(r.roce.queue_pairs[0])
    with pytest.raises(TypeError, match="RoceQueuePair has no key 'window'"):
        netdaq.RoceOptions(queue_pairs=[{"window": 4}])
    with pytest.raises(netdaq.ConfigError) as e:  # the socket engine delivers no IP header for the ICRC
        netdaq.Config.from_dict(span_config(dict(mode="roce", roce={"queue_pairs": [{"qpn": 0x100, "slot_size": 4096}]})))
    assert any(i.key.endswith("roce.check_icrc") and "check_icrc: false" in i.message for i in e.value.issues)


def test_st2110_video_keys_pass_through_from_dicts():
    """Mode rtp_video (docs/video.md): the SDP format parameters from a dict through the loader
    (exactframerate as SDP writes it), and VideoOptions as keywords, changed in place."""
    cfg = netdaq.Config.from_dict(span_config(dict(
        mode="rtp_video", max_streams=2,
        video={"width": 1920, "height": 1080, "sampling": "YCbCr-4:2:2", "depth": 10,
               "exactframerate": "60000/1001", "interlaced": False, "payload_type": 96})))
    v = cfg.reorder("receiver").video
    assert (v.width, v.height, v.sampling, v.depth, v.interlaced, v.payload_type) == (
        1920, 1080, "YCbCr-4:2:2", 10, False, 96)
    assert (v.rate_num, v.rate_den, v.exactframerate) == (60000, 1001, "60000/1001")
    assert (v.line_bytes, v.frame_bytes) == (4800, 4800 * 1080)  # 2 pixels in 5 bytes

    r = netdaq.ReorderConfig(mode="rtp_video", frames="host",
                             video=netdaq.VideoOptions(width=1280, height=720, sampling="RGB", depth=8,
                                                       exactframerate=50))
    assert (r.mode, r.video.exactframerate, r.video.rate_den, r.video.payload_type) == ("rtp_video", "50", 1, -1)
    r.video.interlaced = True
    r.video.exactframerate = "30000/1001"
    assert (r.video.interlaced, r.video.rate_num, r.video.line_bytes) == (True, 30000, 3840)
    assert "1280x720i 30000/1001 RGB 8-bit" in repr(r.video)
    with pytest.raises(ValueError, match="exactframerate = '59.94'"):
        r.video.exactframerate = 59.94
    with pytest.raises(ValueError, match="allowed are YCbCr-4:2:2, YCbCr-4:4:4, RGB"):
        r.video.sampling = "YCbCr-4:2:0"
    with pytest.raises(TypeError, match="VideoOptions has no key 'colorimetry'"):
        netdaq.VideoOptions(colorimetry="BT709")

    with pytest.raises(netdaq.ConfigError) as e:  # width not whole pixel groups; no frame rate
        netdaq.Config.from_dict(span_config(dict(mode="rtp_video", video={"width": 1921, "height": 1080})))
    keys = {i.key.split(".")[-1]: i.message for i in e.value.issues}
    assert "must be a multiple of 2 pixels" in keys["width"], e.value.issues
    assert "is required in mode rtp_video" in keys["exactframerate"], e.value.issues
    with pytest.raises(netdaq.ConfigError) as e:  # the video block of another mode
        netdaq.Config.from_dict(span_config(dict(mode="spead", frame_bytes=4096, video={"width": 8})))
    assert any(i.key.endswith(".video") and "only read in mode rtp_video" in i.message for i in e.value.issues)


def test_span_mode_keys_are_validated():
    with pytest.raises(netdaq.ConfigError) as e:  # the block of another mode
        netdaq.Config.from_dict(span_config(dict(mode="spead", frame_bytes=4096, vita49={"samples_per_frame": 8})))
    assert any("vita49" in i.key for i in e.value.issues), e.value.issues
    with pytest.raises(netdaq.ConfigError) as e:  # spead needs the largest heap
        netdaq.Config.from_dict(span_config(dict(mode="spead")))
    assert any("frame_bytes" in i.key or "frame_bytes" in i.message for i in e.value.issues), e.value.issues


def test_version_and_engines_match_the_cli():
    cli = os.environ.get("NETDAQ_CLI")
    assert re.fullmatch(r"\d+\.\d+\.\d+", netdaq.__version__)
    assert "socket" in netdaq.engines()
    if cli:
        out = subprocess.run([cli, "--version"], capture_output=True, text=True, check=True).stdout
        assert netdaq.__version__ in out.splitlines()[0]
        for e in netdaq.engines():
            assert e in out
    pyproject = (SOURCE / "pyproject.toml").read_text()
    assert f'version = "{netdaq.__version__}"' in pyproject
