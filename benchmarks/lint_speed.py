"""How fast torchlint lints the pinned corpus, against the floor of parsing it with libcst.

    python benchmarks/lint_speed.py [--cache DIR] [--wheels DIR] [--jobs N]

Each measurement is a fresh process: (a) a plain ``libcst.parse_module`` loop over the
files, (b) ``torchlint`` with one job and no cache, (c) with all CPUs and an empty cache,
(d) the same command again with the cache (nothing changed). For each it prints wall
time, lines per second, CPU seconds (user + system, worker processes included) and the
peak resident memory of the largest process, then the ratios (b)/(a), (c)/(a), (d)/(b).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import List

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from corpus import DEFAULT_CACHE, ensure_corpus, python_files  # noqa: E402


@dataclass
class Measurement:
    label: str
    wall: float
    cpu: float
    peak_mb: float
    exit_code: int


def measure(label: str, command: List[str]) -> Measurement:
    """Run ``command`` and read its own resource usage (and its children's) from wait4."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    errors = process.stderr.read().decode(errors="replace").strip() if process.stderr else ""
    if process.returncode not in (0, 1):
        raise SystemExit(f"{label}: {' '.join(command)} exited {process.returncode}:\n{errors}")
    return Measurement(label, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, process.returncode)


def parse_loop(root: str) -> None:
    """Phase (a), run in its own process: read and parse every file, nothing else."""
    import libcst

    for path in python_files(root):
        with open(path, encoding="utf-8") as handle:
            libcst.parse_module(handle.read())


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def count_lines(files: List[str]) -> int:
    total = 0
    for path in files:
        with open(path, "rb") as handle:
            total += handle.read().count(b"\n")
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", default=DEFAULT_CACHE, help="where the corpus is kept")
    parser.add_argument("--wheels", help="a directory already holding the pinned wheels")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="jobs for (c) and (d)")
    parser.add_argument("--parse-only", metavar="ROOT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.parse_only:
        parse_loop(args.parse_only)
        return

    source = ensure_corpus(args.cache, args.wheels)
    files = python_files(source)
    lines = count_lines(files)
    torchlint = [sys.executable, "-m", "torchlint", "--exit-zero", source]
    with tempfile.TemporaryDirectory(prefix="torchlint-bench-cache-") as cache_dir:
        parallel = [*torchlint, "--jobs", str(args.jobs), "--cache-dir", cache_dir]
        results = [
            measure("(a) libcst parse", [sys.executable, __file__, "--parse-only", source]),
            measure("(b) torchlint, 1 job, cold", [*torchlint, "--jobs", "1", "--no-cache"]),
            measure(f"(c) torchlint, {args.jobs} jobs, cold", parallel),
            measure(f"(d) torchlint, {args.jobs} jobs, cached", parallel),
        ]
    print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs, {platform.system()}; Python {platform.python_version()}, "
          f"libcst {importlib.metadata.version('libcst')}")
    print(f"corpus: {len(files)} files, {lines} lines ({source})")
    print(f"{'measurement':<32}{'wall s':>8}{'lines/s':>10}{'CPU s':>8}{'peak MB':>9}")
    for m in results:
        print(f"{m.label:<32}{m.wall:>8.2f}{lines / m.wall:>10.0f}{m.cpu:>8.2f}{m.peak_mb:>9.0f}")
    a, b, c, d = results
    print(f"(b)/(a) wall {b.wall / a.wall:.2f}x, CPU {b.cpu / a.cpu:.2f}x")
    print(f"(c)/(a) wall {c.wall / a.wall:.2f}x, CPU {c.cpu / a.cpu:.2f}x")
    print(f"(d)/(b) wall {d.wall / b.wall:.3f}x ({b.wall / d.wall:.0f}x faster)")


if __name__ == "__main__":
    main()
