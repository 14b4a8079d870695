"""The command line: ``torchlint [PATH ...]``, ``torchlint rules``, ``torchlint explain CODE``."""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from collections import Counter
from dataclasses import replace
from typing import List, Optional, Sequence, TextIO

from torchlint import __version__
from torchlint.cache import DEFAULT_DIRECTORY, Cache, clean, default_directory
from torchlint.config import ConfigError, Settings, check_selectors, find_pyproject, load_settings
from torchlint.diagnostics import Diagnostic
from torchlint.discovery import discover
from torchlint.docs import FIX_LABELS, render
from torchlint.linter import SYNTAX_ERROR
from torchlint.reporters import REPORTERS
from torchlint.reporters.text import safely_fixable
from torchlint.rules import ALL_RULES, RULES_BY_CODE
from torchlint.progress import progress_bar
from torchlint.runner import CHECK, DIFF, FIX, Options, available_cpus, run
from torchlint.usage import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, Parser

KNOWN_CODES = [SYNTAX_ERROR, *RULES_BY_CODE]


def _codes(value: str) -> List[str]:
    return [code.strip().upper() for code in value.split(",") if code.strip()]


def _positive(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got '{value}'")
    return int(value)


def check_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="torchlint",
        description="Find and fix PyTorch performance anti-patterns. "
        "Other commands: `torchlint rules`, `torchlint explain CODE`, `torchlint clean`, `torchlint bench`.",
        epilog="Exit status: 0 no findings, 1 findings remain, 2 usage, configuration or internal error.",
    )
    parser.add_argument("paths", nargs="*", default=["."], metavar="PATH",
                        help="files or directories to check (default: .)")
    parser.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    parser.add_argument("--unsafe-fixes", action="store_true", help="also apply unsafe fixes")
    parser.add_argument("--diff", action="store_true", help="show fixes as a diff; write nothing")
    parser.add_argument("--select", type=_codes, help="rule codes or prefixes to enable (comma-separated)")
    parser.add_argument("--extend-select", type=_codes, default=[], help="codes to enable on top of the selection")
    parser.add_argument("--ignore", type=_codes, default=[], help="codes or prefixes to disable")
    parser.add_argument("--format", choices=sorted(REPORTERS), default="text", dest="output_format",
                        help="output format (default: text; coloured with code frames on a terminal)")
    parser.add_argument("--output-file", metavar="PATH", help="write the findings to PATH instead of stdout")
    parser.add_argument("--exit-non-zero-on-fix", action="store_true",
                        help="with --fix: exit 1 when files were changed, even if no findings remain")
    parser.add_argument("--statistics", action="store_true", help="count findings per rule")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    parser.add_argument("--config", help="pyproject.toml to use (default: the nearest one)")
    parser.add_argument("--jobs", "-j", type=_positive, help="worker processes (default: number of CPUs)")
    parser.add_argument("--cache-dir", help=f"where to keep results (default: {DEFAULT_DIRECTORY} in the project root)")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    parser.add_argument("--version", action="version", version=f"torchlint {__version__}")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "rules":
            return _rules_command(argv[1:])
        if argv and argv[0] == "explain":
            return _explain_command(argv[1:])
        if argv and argv[0] == "clean":
            return _clean_command(argv[1:])
        if argv and argv[0] == "bench":
            from torchlint.bench.command import main as bench_main

            return bench_main(argv[1:])
        return _check_command(argv)
    except ConfigError as exc:
        sys.stderr.write(f"torchlint: error: {exc}\n")
        return EXIT_ERROR
    except BrokenPipeError:
        # The reader went away (`torchlint --format json | head -1`): stop quietly. Point stdout
        # at devnull so that Python's flush at exit does not raise again (the recipe of the
        # `signal` module's documentation).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FINDINGS


def _settings(args: argparse.Namespace) -> Settings:
    pyproject = args.config or find_pyproject(args.paths[0] if args.paths else ".")
    settings = load_settings(pyproject, KNOWN_CODES)
    for flag in ("select", "extend_select", "ignore"):
        check_selectors(getattr(args, flag) or [], KNOWN_CODES, f"--{flag.replace('_', '-')}")
    overrides = {"extend_select": settings.extend_select + tuple(args.extend_select),
                 "ignore": settings.ignore + tuple(args.ignore)}
    if args.select:
        overrides["select"] = tuple(args.select)
    return replace(settings, **overrides)


def _check_command(argv: List[str]) -> int:
    args = check_parser().parse_args(argv)
    if args.output_format in ("json", "sarif") and not args.output_file:
        for flag, given in (("--statistics", args.statistics), ("--diff", args.diff)):
            if given:  # their text would make the document on stdout unreadable
                raise ConfigError(f"{flag} cannot share stdout with --format {args.output_format}; add --output-file PATH")
    settings = _settings(args)
    mode = DIFF if args.diff else FIX if args.fix else CHECK
    files, errors = discover(args.paths, settings)
    if not files and not errors:
        sys.stderr.write("torchlint: warning: no Python files found under the given paths\n")
    gc.freeze()  # what is loaded by now lives until exit: spare the collector rescanning it
    cache = None if args.no_cache else Cache(args.cache_dir or default_directory(settings), settings)
    with progress_bar(len(files), enabled=args.output_format in ("text", "concise")) as advance:
        outcomes = run(files, settings, Options(mode, args.unsafe_fixes), args.jobs or available_cpus(), cache, advance)
    for warning in cache.warnings if cache else ():
        sys.stderr.write(f"torchlint: warning: {warning}\n")
    diagnostics = sorted((d for outcome in outcomes for d in outcome.diagnostics), key=Diagnostic.sort_key)
    errors += [error for outcome in outcomes for error in outcome.errors]
    out = sys.stdout
    if mode == DIFF:
        for outcome in outcomes:
            out.write(outcome.diff)
    if args.output_file:
        errors += _report_to_file(args.output_file, args.output_format, diagnostics)
    else:
        REPORTERS[args.output_format](diagnostics, out, out.isatty())
    if args.statistics:
        _statistics(diagnostics, out)
    if args.output_format == "text":
        _summary(diagnostics, sum(o.fixed for o in outcomes), mode, out, bool(errors))
    for error in errors:
        sys.stderr.write(f"torchlint: error: {error}\n")
    if errors:
        return EXIT_ERROR
    if mode == DIFF and any(outcome.diff for outcome in outcomes):
        return EXIT_FINDINGS
    if args.exit_non_zero_on_fix and mode == FIX and any(outcome.fixed for outcome in outcomes):
        return EXIT_FINDINGS
    if diagnostics and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _report_to_file(path: str, output_format: str, diagnostics: List[Diagnostic]) -> List[str]:
    """Write the report to ``path``; a one-line error if it cannot be written."""
    try:
        with open(path, "w", encoding="utf-8") as stream:
            REPORTERS[output_format](diagnostics, stream, False)
    except OSError as exc:
        return [f"{path}: cannot write the report: {exc.strerror or exc}"]
    return []


def _statistics(diagnostics: List[Diagnostic], out: TextIO) -> None:
    counts = Counter(d.code for d in diagnostics)
    fixable = Counter(d.code for d in diagnostics if safely_fixable(d))
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        name = RULES_BY_CODE[code].name if code in RULES_BY_CODE else "syntax-error"
        marker = "[*]" if fixable[code] else "   "
        out.write(f"{count:>6}  {code}  {marker} {name}\n")


def _summary(diagnostics: List[Diagnostic], fixed: int, mode: str, out: TextIO, errors: bool) -> None:
    if fixed and mode in (FIX, DIFF):
        out.write(f"{'Fixed' if mode == FIX else 'Would fix'} {fixed} finding{'s' * (fixed != 1)}.\n")
    if not diagnostics:
        if mode != DIFF and not errors:
            out.write("All checks passed!\n")
        return
    count = len(diagnostics)
    out.write(f"Found {count} finding{'s' * (count != 1)}.\n")
    fixable = [d for d in diagnostics if d.fix]
    safe = sum(1 for d in fixable if safely_fixable(d))
    if safe and mode == CHECK:
        out.write(f"[*] {safe} fixable with `torchlint --fix`.\n")
    if len(fixable) > safe:
        out.write(f"{len(fixable) - safe} more fixable with `--fix --unsafe-fixes`.\n")


def _rules_command(argv: List[str]) -> int:
    parser = Parser(prog="torchlint rules", description="List every rule.")
    parser.add_argument("--format", choices=["text", "json"], default="text", dest="output_format")
    args = parser.parse_args(argv)
    if args.output_format == "json":
        rows = [{"code": r.code, "name": r.name, "summary": r.summary(), "fix": r.fix} for r in ALL_RULES]
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return EXIT_CLEAN
    fixes = {rule.code: FIX_LABELS[rule.fix].split(" (")[0] for rule in ALL_RULES}
    if not sys.stdout.isatty():  # one line per rule, nothing padded: for grep and cut
        for rule in ALL_RULES:
            sys.stdout.write(f"{rule.code}  {rule.name:<34} {fixes[rule.code]:<21} {rule.summary()}\n")
        return EXIT_CLEAN
    from rich.console import Console
    from rich.table import Table

    table = Table("Code", "Name", "Fix", "Summary", box=None)
    for rule in ALL_RULES:
        table.add_row(rule.code, rule.name, fixes[rule.code], rule.summary())
    Console().print(table)
    return EXIT_CLEAN


def _explain_command(argv: List[str]) -> int:
    parser = Parser(prog="torchlint explain", description="Show a rule's documentation.")
    parser.add_argument("code")
    args = parser.parse_args(argv)
    rule = RULES_BY_CODE.get(args.code.upper())
    if rule is None:
        raise ConfigError(f"unknown rule code '{args.code}' (see `torchlint rules`)")
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.markdown import Markdown

        Console().print(Markdown(render(rule)))
    else:
        sys.stdout.write(render(rule))
    return EXIT_CLEAN


def _clean_command(argv: List[str]) -> int:
    parser = Parser(prog="torchlint clean", description="Remove torchlint's cache directory.")
    parser.add_argument("--cache-dir", help=f"the cache to remove (default: {DEFAULT_DIRECTORY} in the project root)")
    parser.add_argument("--config", help="pyproject.toml whose project root holds the cache")
    args = parser.parse_args(argv)
    if args.cache_dir:
        directory = args.cache_dir
    else:
        pyproject = args.config or find_pyproject(".")
        directory = default_directory(Settings(source=pyproject))
    try:
        sys.stdout.write(clean(directory) + "\n")
    except OSError as exc:
        raise ConfigError(str(exc)) from None
    return EXIT_CLEAN
