#!/usr/bin/env python3
"""Per ctest label: how many tests ran, passed, failed and skipped, and why each skip happened.

  scripts/ctest-summary.py BUILD_DIR JUNIT_XML

BUILD_DIR's tests and labels come from `ctest --show-only=json-v1`; their results from the
JUnit file ctest wrote (`ctest --output-junit JUNIT_XML`, a path relative to BUILD_DIR as ctest
takes it). A test listed by ctest but absent from the results counts as "not run". Prints a
table; exits 0 (the ctest run itself decides pass or fail).
"""
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET


def labels_by_test(build):
    out = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, capture_output=True, text=True, check=True).stdout
    tests = {}
    for t in json.loads(out).get("tests", []):
        labels = []
        for p in t.get("properties", []):
            if p.get("name") == "LABELS":
                labels = list(p.get("value", []))
        tests[t["name"]] = labels or ["(no label)"]
    return tests


def results(junit):
    """name -> (status, reason): status one of passed, failed, skipped."""
    out = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = case.get("name")
        failure = case.find("failure")
        skipped = case.find("skipped")
        status = case.get("status", "")
        if failure is not None:
            out[name] = ("failed", failure.get("message", ""))
        elif skipped is not None or status in ("notrun", "disabled"):
            text = (skipped.get("message", "") if skipped is not None else "") or ""
            # gtest's skip line ("... Skipped\n<reason>") travels in system-out.
            sysout = case.findtext("system-out") or ""
            m = re.search(r"^.*: Skipped\n(.*?)^\[  SKIPPED \]", sysout, re.M | re.S)
            if m and m.group(1).strip():
                text = " ".join(m.group(1).split())
            out[name] = ("skipped", text)
        else:
            out[name] = ("passed", "")
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    build, junit = sys.argv[1], sys.argv[2]
    if not os.path.isabs(junit):
        junit = os.path.join(build, junit)
    tests = labels_by_test(build)
    res = results(junit) if os.path.exists(junit) else {}
    rows = {}
    reasons = {}
    for name, labels in tests.items():
        status, why = res.get(name, ("not run", ""))
        for label in labels:
            row = rows.setdefault(label, {"tests": 0, "passed": 0, "failed": 0, "skipped": 0, "not run": 0})
            row["tests"] += 1
            row[status] += 1
        if status == "skipped":
            key = (",".join(labels), why[:200] or "(no reason given)")
            reasons[key] = reasons.get(key, 0) + 1
    print("Per label (a test with several labels counts under each):")
    print(f"  {'label':<12} {'tests':>6} {'passed':>7} {'failed':>7} {'skipped':>8} {'not run':>8}")
    for label in sorted(rows):
        r = rows[label]
        print(f"  {label:<12} {r['tests']:>6} {r['passed']:>7} {r['failed']:>7} {r['skipped']:>8} {r['not run']:>8}")
    if reasons:
        print("Skipped, and why:")
        for (labels, why), n in sorted(reasons.items(), key=lambda kv: -kv[1]):
            print(f"  {n:>4} x [{labels}] {why}")


if __name__ == "__main__":
    main()
