"""``torchlint bench [CODE ...]``: argument parsing, the run over fixtures, output and exit code."""

from __future__ import annotations

import json
import os
import shlex
import sys
from contextlib import nullcontext
from typing import List, Optional, Sequence, Type

from torchlint.config import ConfigError
from torchlint.rules import ALL_RULES
from torchlint.rules.base import Rule
from torchlint.usage import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, Parser


def parser() -> Parser:
    from torchlint.bench.fixture import DEFAULT_ROOT

    parser = Parser(prog="torchlint bench",
                     description="Check and time each rule's fixture pair (before.py, after.py).")
    parser.add_argument("codes", nargs="*", metavar="CODE", help="rule codes or prefixes (default: every rule)")
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                        help="auto: cuda when available, else cpu (cpu runs with 1 torch thread)")
    parser.add_argument("--size", choices=["small", "full"], default="small", help="workload size")
    parser.add_argument("--repeat", type=int, default=5, help="timed repeats per side (default 5)")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    parser.add_argument("--markdown", metavar="FILE", help="write a markdown section for docs/benchmarks.md")
    parser.add_argument("--fixtures", metavar="DIR", default=DEFAULT_ROOT, help="fixtures root (default: %(default)s)")
    return parser


def selected_rules(codes: Sequence[str]) -> List[Type[Rule]]:
    if not codes:
        return list(ALL_RULES)
    wanted = [code.upper() for code in codes]
    for code in wanted:
        if not any(rule.code.startswith(code) for rule in ALL_RULES):
            raise ConfigError(f"unknown rule code '{code}' (see `torchlint rules`)")
    return [rule for rule in ALL_RULES if any(rule.code.startswith(code) for code in wanted)]


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parser().parse_args(argv)
        rules = selected_rules(args.codes)
        if args.repeat < 1:
            raise ConfigError("--repeat must be at least 1")
        if not os.path.isdir(args.fixtures):
            raise ConfigError(f"--fixtures {args.fixtures}: no such directory")
        try:
            import torch
        except ImportError:
            raise ConfigError("`torchlint bench` needs torch: pip install 'torchlint[bench]'") from None
        device = _device(torch, args.device)
    except ConfigError as exc:
        sys.stderr.write(f"torchlint: error: {exc}\n")
        return EXIT_ERROR
    return _run(args, rules, device)


def _device(torch, choice: str):
    if choice == "cuda" or (choice == "auto" and torch.cuda.is_available()):
        if not torch.cuda.is_available():
            raise ConfigError("--device cuda: no CUDA device is available")
        return torch.device("cuda")
    torch.set_num_threads(1)  # stable CPU figures on shared machines
    return torch.device("cpu")


def _command_line(args) -> str:
    """The command that reproduces the measurement (without its output files)."""
    options = ["--device", args.device, "--size", args.size, "--repeat", str(args.repeat)]
    return shlex.join(["torchlint", "bench", *args.codes, *options])


def _run(args, rules: List[Type[Rule]], device) -> int:
    from rich.console import Console

    from torchlint.bench import report
    from torchlint.bench.environment import describe
    from torchlint.bench.harness import FAILED, Machine, bench
    from torchlint.bench.results import markdown

    machine = Machine.for_device(device)
    results = []
    progress = _progress()
    with progress or nullcontext():
        task = progress.add_task("bench", total=len(rules)) if progress else None
        for rule in rules:
            def phase(name: str, code: str = rule.code) -> None:
                if progress:
                    progress.update(task, description=f"{code}: {name}")

            results.append(bench(rule, args.fixtures, machine, args.size, args.repeat, phase))
            if progress:
                progress.advance(task)
    env = describe(device, args.size, args.repeat, _command_line(args), args.fixtures)
    document = report.document(env, results)
    Console(width=None if sys.stdout.isatty() else 160).print(report.table(document))
    try:
        if args.json:
            _write(args.json, json.dumps(document, indent=2) + "\n")
        if args.markdown:
            _write(args.markdown, markdown(document))
    except OSError as exc:
        sys.stderr.write(f"torchlint: error: cannot write {exc.filename}: {exc.strerror}\n")
        return EXIT_ERROR
    return EXIT_FINDINGS if any(result.status == FAILED for result in results) else EXIT_CLEAN


def _progress():
    """A rich progress bar on stderr when it is a terminal, else None."""
    if not sys.stderr.isatty():
        return None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=Console(stderr=True), transient=True)


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
