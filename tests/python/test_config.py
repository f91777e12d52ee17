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
    with pytest.raises(ValueError, match="allowed are raw, int4, int8, int16, fp16, bf16, fp32"):
        r.output = "fp64"
    with pytest.raises(TypeError, match="no key 'packets'"):
        netdaq.ReorderConfig(packets=3)
    cfg = netdaq.Config.load(SOURCE / "examples" / "gpu-frames.yaml")
    first = cfg.reorder(cfg.interfaces[0])
    assert first.packets_per_frame > 0
    with pytest.raises(netdaq.Error, match="rx.reorder entries"):
        cfg.reorder(cfg.interfaces[0], 99)


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
