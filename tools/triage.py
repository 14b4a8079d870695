"""Corpus triage: run torchlint over real code and print every finding with its source line.

    python tools/triage.py PATH [--select TL2]

Prints a count per rule, then each finding as `path:line: CODE | source line`, for reading
by hand. Nothing here is a test: it is how the rules were checked for false positives.
"""

import argparse
import collections
import json
import subprocess
import sys


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("path")
    parser.add_argument("--select", default="TL")
    args = parser.parse_args()
    proc = subprocess.run(
        [sys.executable, "-m", "torchlint", "--format", "json", "--select", args.select,
         "--exit-zero", args.path],
        capture_output=True, text=True,
    )
    findings = [d for d in json.loads(proc.stdout or "[]") if d["code"] != "TL001"]
    counts = collections.Counter(d["code"] for d in findings)
    for code, count in sorted(counts.items()):
        print(f"{code}: {count}")
    sources = {}  # path -> its lines, read once however many findings it has
    for d in findings:
        if d["path"] not in sources:
            with open(d["path"], encoding="utf-8", errors="replace") as handle:
                sources[d["path"]] = handle.read().splitlines()
        line = sources[d["path"]][d["line"] - 1].strip()
        print(f"{d['path']}:{d['line']}: {d['code']} | {line}")
    sys.stderr.write(proc.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
