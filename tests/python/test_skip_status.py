"""The exit status of a pytest run under conftest.py's rule, which ctest reads (tests/CMakeLists.txt:
SKIP_RETURN_CODE 77): 77 only when every test skipped and none failed, so a failure beside skips
fails the ctest instead of reading as "skipped"."""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent

CASES = {
    "one_failure_beside_skips": ("def test_a():\n    pytest.skip('no GPU')\n"
                                 "def test_b():\n    pytest.skip('no GPU')\n"
                                 "def test_c():\n    assert 1 == 2\n", 1),
    "an_error_in_setup_beside_skips": ("@pytest.fixture\ndef broken():\n    raise RuntimeError('setup')\n"
                                       "def test_a(broken):\n    pass\n"
                                       "def test_b():\n    pytest.skip('no GPU')\n", 1),
    "every_test_skipped": ("def test_a():\n    pytest.skip('no GPU')\n"
                           "def test_b():\n    pytest.skip('no GPU')\n", 77),
    "a_pass_beside_skips": ("def test_a():\n    pytest.skip('no GPU')\n"
                            "def test_b():\n    assert True\n", 0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_exit_status(tmp_path, name):
    body, want = CASES[name]
    shutil.copy(HERE / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / f"test_{name}.py").write_text("import pytest\n" + body)
    env = dict(os.environ, CI="")  # conftest's CI rule plays no part in the exit status
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert run.returncode == want, f"{name}: exit {run.returncode}, want {want}\n{run.stdout}{run.stderr}"
