"""Writes a seed corpus directory, or checks that it holds exactly what its script writes.

Shared by the make_*_corpus.py scripts: `main(OUT, files, doc)` with files {name: bytes};
`--check` exits non-zero naming the files that differ (a ctest runs it, so a corpus edited by
hand or a script changed without rerunning it fails)."""

import sys


def main(out, files, doc):
    check = sys.argv[1:] == ["--check"]
    if sys.argv[1:] and not check:
        sys.exit(doc)
    want = dict(files)
    have = {p.name: p.read_bytes() for p in out.glob("*.bin")} if out.is_dir() else {}
    if check:
        stale = sorted(n for n in want.keys() | have.keys() if want.get(n) != have.get(n))
        if stale:
            sys.exit("%s out of date (run %s): %s" % (out.name, sys.argv[0], ", ".join(stale)))
        print("%s: %d files up to date" % (out.name, len(want)))
        return
    out.mkdir(exist_ok=True)
    for name in have.keys() - want.keys():
        (out / name).unlink()
    for name, data in want.items():
        (out / name).write_bytes(data)
    print("wrote %d files to %s" % (len(want), out))
