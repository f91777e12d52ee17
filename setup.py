"""Builds netdaq's extension module with CMake for `pip install .` (see pyproject.toml)."""
import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    """The module is the CMake target netdaq_python; this copies what it built into the wheel."""

    def build_extension(self, ext):
        build_dir = os.environ.get("NETDAQ_BUILD_DIR")
        if build_dir:  # a configured tree (e.g. the tests' build/): only the module is built
            build_dir = pathlib.Path(build_dir).resolve()
        else:
            build_dir = ROOT / "build-python"
            subprocess.check_call([
                "cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                "-DNETDAQ_BUILD_TESTS=OFF", "-DNETDAQ_BUILD_BENCH=OFF",
                f"-DPython_EXECUTABLE={sys.executable}"])
        subprocess.check_call(["cmake", "--build", str(build_dir), "--target", "netdaq_python",
                               "-j", str(os.cpu_count() or 1)])
        built = sorted((build_dir / "python" / "netdaq").glob("_netdaq*.so"))
        if not built:
            raise RuntimeError(f"CMake built no netdaq/_netdaq*.so under {build_dir}/python "
                               "(is pybind11-dev, python3-dev and libdlpack-dev installed?)")
        dest = pathlib.Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built[0], dest)


(ROOT / "build-pip").mkdir(exist_ok=True)
setup(
    ext_modules=[Extension("netdaq._netdaq", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # not build/: that is the CMake tree of scripts/build.sh
    options={"build": {"build_base": "build-pip"}, "egg_info": {"egg_base": "build-pip"}},
)
