"""``--fix`` over copies of real code: everything still parses, a second pass changes nothing,
and no fix introduces an undefined name.

    python benchmarks/fix_corpus.py [--cache DIR] [--wheels DIR] [--no-accuracy-set]

Copies the pinned speed corpus and the accuracy set's packages (``accuracy.py``) to a
temporary directory and, for safe fixes only and then for every fix (``--unsafe-fixes``):
counts the fixes each rule offers at each level, runs ``torchlint --fix``, checks that every
changed file still parses (libcst and Python's compiler), runs the same command again
(it must change nothing), and compares the undefined names pyflakes reports in each
changed file before and after (a fix must add none). Exits 1 on any failure. Needs
pyflakes (``pip install pyflakes``).
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Counter, Dict, List

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


def torchlint(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    command = [sys.executable, "-m", "torchlint", "--no-cache", "--exit-zero", "--preview", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env)


def offered(root: str) -> Counter:
    """(rule, level) -> how many findings offer a fix at that level."""
    proc = torchlint("--format", "json", root)
    return collections.Counter(
        (d["code"], d["fix"]["applicability"]) for d in json.loads(proc.stdout or "[]") if d["fix"]
    )


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


def undefined_names(text: str, path: str) -> Counter:
    """The undefined names pyflakes finds in ``text`` (name -> count)."""
    from pyflakes import checker, messages

    try:
        tree = compile(text, path, "exec", flags=0x400, dont_inherit=True)  # ast.PyCF_ONLY_AST
    except (SyntaxError, ValueError):
        return collections.Counter()
    found = checker.Checker(tree, filename=path).messages
    return collections.Counter(m.message_args[0] for m in found if isinstance(m, messages.UndefinedName))


def run(root: str, unsafe: bool) -> bool:
    label = "every fix (--unsafe-fixes)" if unsafe else "safe fixes"
    flags = ["--fix", "--unsafe-fixes"] if unsafe else ["--fix"]
    original = digests(root)
    texts = {}
    for path in original:
        with open(path, encoding="utf-8", errors="replace") as handle:
            texts[path] = handle.read()
    first = torchlint(*flags, root)
    after_first = digests(root)
    changed = sorted(path for path in original if after_first[path] != original[path])
    broken = unparsable(changed)
    new_names = []
    for path in changed:
        with open(path, encoding="utf-8", errors="replace") as handle:
            added = undefined_names(handle.read(), path) - undefined_names(texts[path], path)
        new_names += [f"{os.path.relpath(path, root)}: {name}" for name in added]
    second = torchlint(*flags, root)
    after_second = digests(root)
    changed_again = sorted(path for path in original if after_second[path] != after_first[path])
    summary = " ".join(line for line in first.stdout.splitlines() if line.startswith(("Fixed", "Found")))
    print(f"{label}: exit {first.returncode}, {len(changed)} of {len(original)} files changed. {summary}")
    for line in first.stderr.splitlines():
        print(f"  {line}")
    for title, items in (("files that no longer parse", broken), ("undefined names added", new_names),
                         ("files changed by a second pass", changed_again)):
        print(f"  {title}: {len(items)}")
        for item in items:
            print(f"    {item}")
    return _clean(first) and _clean(second) and not broken and not new_names and not changed_again


def _clean(proc: subprocess.CompletedProcess) -> bool:
    """Did the run succeed, apart from files it reported it could not parse (they stay as they are)?"""
    unparsed = proc.stderr.strip() and all("not linted" in line for line in proc.stderr.strip().splitlines())
    return proc.returncode == 0 or (proc.returncode == 2 and bool(unparsed))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", default=DEFAULT_CACHE, help="where the corpora are kept")
    parser.add_argument("--wheels", help="a directory already holding the speed corpus's wheels")
    parser.add_argument("--no-accuracy-set", action="store_true", help="only the speed corpus")
    args = parser.parse_args()
    corpora = {"speed corpus": ensure_corpus(args.cache, args.wheels)}
    if not args.no_accuracy_set:
        from accuracy import sources

        corpora.update(sources(os.path.join(args.cache, "accuracy")))
    ok = True
    with tempfile.TemporaryDirectory(prefix="torchlint-fix-corpus-") as scratch:
        for unsafe in (False, True):
            root = os.path.join(scratch, "unsafe" if unsafe else "safe")
            for name, source in corpora.items():
                shutil.copytree(source, os.path.join(root, name.replace(" ", "_")))
            if not unsafe:
                counts = offered(root)
                print("fixes offered, per rule and level:")
                for (code, level), count in sorted(counts.items()):
                    print(f"  {code} {level}: {count}")
            ok = run(root, unsafe) and ok
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
