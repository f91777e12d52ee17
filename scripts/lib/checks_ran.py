#!/usr/bin/env python3
"""Fails when any named check of a `netdaq check --json` report was skipped or is absent.
scripts/gpu-check.sh: on the GPU machine gpu.driver, gpu.attributes and gpu.clocks must run.
   checks_ran.py REPORT.json NAME..."""
import json
import sys

report, names = sys.argv[1], sys.argv[2:]
try:
    checks = json.load(open(report))["checks"]
except (OSError, ValueError, KeyError) as e:
    sys.exit(f"checks_ran: no check report in {report}: {e}")
failed = False
for name in names:
    found = [c for c in checks if c["name"] == name]
    if not found:
        print(f"FAILED: {name}: not in the report")
        failed = True
    for c in found:
        subject = f" ({c['subject']})" if c.get("subject") else ""
        line = f"{name}{subject}: {c['status']}: {c.get('what', '')}"
        print(("FAILED (skipped): " if c["status"] == "skip" else "") + line)
        failed |= c["status"] == "skip"
sys.exit(1 if failed else 0)
