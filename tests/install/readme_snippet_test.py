#!/usr/bin/env python3
"""The README's C++ API snippet is compiled: it must equal the lines between
"// README snippet begins" and "// README snippet ends" in examples/cpp/quickstart/main.cpp
(dedented), which tests/install/install_test.sh builds against the installed library and runs.
  readme_snippet_test.py SOURCE_DIR"""
import re
import sys
import textwrap
from pathlib import Path

src = Path(sys.argv[1])
program = (src / "examples/cpp/quickstart/main.cpp").read_text()
m = re.search(r"\n[ \t]*// README snippet begins\n(.*?)\n[ \t]*// README snippet ends\n", program, re.S)
if not m:
    sys.exit("examples/cpp/quickstart/main.cpp: no '// README snippet begins/ends' markers")
snippet = textwrap.dedent(m.group(1)).strip("\n")
readme = (src / "README.md").read_text()
blocks = re.findall(r"```cpp\n(.*?)\n```", readme, re.S)
if not blocks:
    sys.exit("README.md: no ```cpp block")
if snippet not in (b.strip("\n") for b in blocks):
    import difflib
    diff = difflib.unified_diff(blocks[0].splitlines(), snippet.splitlines(), "README.md", "quickstart/main.cpp", lineterm="")
    sys.exit("README.md's C++ snippet differs from examples/cpp/quickstart/main.cpp's:\n" + "\n".join(diff))
print(f"README snippet ({len(snippet.splitlines())} lines) == examples/cpp/quickstart/main.cpp")
