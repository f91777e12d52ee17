"""`pip install .` works offline: Debian's setuptools builds the module through CMake (reusing
the tests' build directory), into a fresh venv, without touching the network."""
import os
import pathlib
import subprocess
import sys

from conftest import require

SOURCE = pathlib.Path(os.environ.get("NETDAQ_SOURCE_DIR", pathlib.Path(__file__).parents[2]))


def test_pip_install_offline_into_a_venv(tmp_path):
    build = os.environ.get("NETDAQ_BUILD_DIR")
    require(build, "NETDAQ_BUILD_DIR is not set (ctest sets it)")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    env = dict(os.environ, NETDAQ_BUILD_DIR=build, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)  # the installed package, not the build tree's
    r = subprocess.run([venv / "bin" / "pip", "install", "--no-build-isolation", "--no-index", str(SOURCE)],
                       env=env, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    check = ("import netdaq, numpy; print(netdaq.__file__); print(netdaq.__version__); "
             "print(netdaq.Config.load(%r).interfaces)" % str(SOURCE / "examples" / "loopback.yaml"))
    out = subprocess.run([venv / "bin" / "python", "-c", check], env=env, cwd=tmp_path,
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0].startswith(str(venv)), out
    assert out[2] == "['receiver', 'sender']"
    listed = subprocess.run([venv / "bin" / "pip", "show", "netdaq"], env=env, capture_output=True, text=True).stdout
    assert f"Version: {out[1]}" in listed
