"""``--fix --unsafe-fixes`` over a copy of the speed corpus: does everything still parse?

    python benchmarks/fix_corpus.py [--cache DIR] [--wheels DIR]

Copies the pinned corpus to a temporary directory, runs ``torchlint --fix --unsafe-fixes``
over it, checks that every file it changed still parses (libcst and Python's compiler),
then runs the same command again and checks that it changes nothing. Exits 1 on failure.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Dict, List

import libcst

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from corpus import DEFAULT_CACHE, ensure_corpus, python_files  # noqa: E402


def digests(root: str) -> Dict[str, str]:
    result = {}
    for path in python_files(root):
        with open(path, "rb") as handle:
            result[path] = hashlib.sha256(handle.read()).hexdigest()
    return result


def fix(root: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    command = [sys.executable, "-m", "torchlint", "--fix", "--unsafe-fixes", "--no-cache", "--exit-zero", root]
    return subprocess.run(command, capture_output=True, text=True, env=env)


def unparsable(paths: List[str]) -> List[str]:
    broken = []
    for path in paths:
        with open(path, "rb") as handle:
            data = handle.read()
        try:
            compile(data, path, "exec", dont_inherit=True)
            libcst.parse_module(data)
        except (SyntaxError, ValueError, libcst.ParserSyntaxError) as exc:
            broken.append(f"{path}: {type(exc).__name__}: {str(exc).splitlines()[0]}")
    return broken


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", default=DEFAULT_CACHE, help="where the corpus is kept")
    parser.add_argument("--wheels", help="a directory already holding the pinned wheels")
    args = parser.parse_args()
    source = ensure_corpus(args.cache, args.wheels)
    with tempfile.TemporaryDirectory(prefix="torchlint-fix-corpus-") as scratch:
        root = os.path.join(scratch, "src")
        shutil.copytree(source, root)
        original = digests(root)
        first = fix(root)
        after_first = digests(root)
        changed = sorted(path for path in original if after_first[path] != original[path])
        broken = unparsable(changed)
        second = fix(root)
        after_second = digests(root)
        changed_again = sorted(path for path in original if after_second[path] != after_first[path])
    summary = " ".join(line for line in first.stdout.splitlines() if line.startswith(("Fixed", "Found")))
    print(f"first pass: exit {first.returncode}, {len(changed)} of {len(original)} files changed. {summary}")
    for line in first.stderr.splitlines():
        print(f"  {line}")
    print(f"files changed that no longer parse: {len(broken)}")
    for line in broken:
        print(f"  {line}")
    print(f"second pass: exit {second.returncode}, {len(changed_again)} files changed")
    for path in changed_again:
        print(f"  {os.path.relpath(path, root)}")
    ok = first.returncode == 0 and second.returncode == 0 and not broken and not changed_again
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
