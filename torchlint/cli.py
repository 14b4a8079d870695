"""The command line: ``torchlint [check] [PATH ...]``, ``rules``, ``rule``/``explain CODE``,
``clean``, ``bench`` and ``server``."""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from dataclasses import dataclass, replace
from typing import List, Optional, Sequence, TextIO

from torchlint import __version__
from torchlint.cache import DEFAULT_DIRECTORY, Cache, clean, default_directory
from torchlint.codes import ENGINE_CODES, io_error, known_codes
from torchlint.config import ConfigError, Settings, check_selectors, find_pyproject, load_settings
from torchlint.diagnostics import Diagnostic
from torchlint.discovery import discover
from torchlint.docs import FIX_LABELS, rule_page
from torchlint.progress import progress_bar
from torchlint.reporters import REPORTERS
from torchlint.reporters.summary import plural, report_fixable, report_fixes, report_statistics, report_summary
from torchlint.rules import ALL_RULES
from torchlint.runner import ADD_NOQA, CHECK, DIFF, FIX, FileOutcome, Options, available_cpus, process_source, run
from torchlint.usage import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, Parser

COMMANDS = "`torchlint rules`, `torchlint rule CODE`, `torchlint clean`, `torchlint bench`, `torchlint server`"
TEXT_FORMATS = ("text", "concise")
STATISTICS_FORMATS = ("text", "concise", "json")


def _codes(value: str) -> List[str]:
    return [code.strip().upper() for code in value.split(",") if code.strip()]


def _positive(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got '{value}'")
    return int(value)


def check_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="torchlint [check]",
        description=f"Find and fix PyTorch performance anti-patterns. Other commands: {COMMANDS}.",
        epilog="Exit status: 0 no findings, 1 findings remain, 2 usage, configuration or internal error.",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="files or directories to check (default: .); `-` reads standard input")
    fixing = parser.add_argument_group("fixing")
    fixing.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    fixing.add_argument("--unsafe-fixes", action="store_true", help="also apply unsafe fixes")
    fixing.add_argument("--fix-only", action="store_true",
                        help="apply fixes, but neither report nor exit non-zero for what is left (implies --fix)")
    fixing.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    fixing.add_argument("--show-fixes", action="store_true",
                        help="list the fixes applied (with --fix) or offered, per rule")
    fixing.add_argument("--exit-non-zero-on-fix", action="store_true",
                        help="with --fix: exit 1 when files were changed, even if no findings remain")
    fixing.add_argument("--add-noqa", action="store_true",
                        help="add `# noqa: CODE` to the line of every finding (adopting torchlint in one commit)")
    selection = parser.add_argument_group("rule selection")
    selection.add_argument("--select", type=_codes, help="rule codes or prefixes to enable (comma-separated)")
    selection.add_argument("--extend-select", type=_codes, default=[], help="codes to enable on top of the selection")
    selection.add_argument("--ignore", type=_codes, default=[], help="codes or prefixes to disable")
    selection.add_argument("--preview", action=argparse.BooleanOptionalAction, default=None,
                           help="enable the rules in preview (default: `preview` in [tool.torchlint], else off)")
    output = parser.add_argument_group("output")
    output.add_argument("--output-format", "--format", choices=sorted(REPORTERS), default="text",
                        dest="output_format", help="output format (default: text; coloured on a terminal)")
    output.add_argument("--output-file", "-o", metavar="PATH", help="write the findings to PATH instead of stdout")
    output.add_argument("--statistics", action="store_true", help="print only the number of findings per rule")
    output.add_argument("--quiet", "-q", action="store_true", help="print the findings and nothing else")
    output.add_argument("--silent", "-s", action="store_true", help="print nothing but errors; the exit status says it")
    output.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    output.add_argument("--show-files", action="store_true", help="list the files that would be checked, and stop")
    output.add_argument("--show-settings", action="store_true", help="print the settings in effect, and stop")
    run_group = parser.add_argument_group("running")
    run_group.add_argument("--stdin-filename", metavar="PATH",
                           help="the path standard input stands for (configuration, ignores, output)")
    run_group.add_argument("--watch", "-w", action="store_true", help="check again whenever a file changes")
    run_group.add_argument("--config", help="pyproject.toml to use (default: the nearest one)")
    run_group.add_argument("--jobs", "-j", type=_positive, help="worker processes (default: number of CPUs)")
    run_group.add_argument("--cache-dir",
                           help=f"where to keep results (default: {DEFAULT_DIRECTORY} in the project root)")
    run_group.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    parser.add_argument("--version", action="version", version=f"torchlint {__version__}")
    return parser


SUBCOMMANDS = {}


def subcommand(*names: str):
    def register(function):
        for name in names:
            SUBCOMMANDS[name] = function
        return function
    return register


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in SUBCOMMANDS:
            return SUBCOMMANDS[argv[0]](argv[1:])
        return check_command(argv)
    except ConfigError as exc:
        sys.stderr.write(f"torchlint: error: {exc}\n")
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`torchlint --format json | head -1`): stop quietly. Point stdout
        # at devnull so that Python's flush at exit does not raise again (the recipe of the
        # `signal` module's documentation).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FINDINGS


@dataclass
class Check:
    """One ``torchlint check`` invocation: its arguments and resolved settings."""

    args: argparse.Namespace
    settings: Settings
    options: Options
    stdin: bool

    @property
    def reports_findings(self) -> bool:
        return not (self.args.fix_only or self.args.silent or self.options.mode in (DIFF, ADD_NOQA))


@subcommand("check")
def check_command(argv: List[str]) -> int:
    args = check_parser().parse_args(argv)
    check = _prepare(args)
    if args.show_settings:
        _show_settings(check.settings, args.stdin_filename or args.paths[0])
        return EXIT_CLEAN
    if args.watch:
        from torchlint.watch import watch

        return watch(args.paths, lambda: _check_again(args))
    return _run_check(check)


def _check_again(args: argparse.Namespace) -> None:
    """One check of ``--watch``: the configuration is read again, and a bad one reported."""
    try:
        _run_check(_prepare(args), watching=True)
    except ConfigError as exc:
        sys.stderr.write(f"torchlint: error: {exc}\n")


def _prepare(args: argparse.Namespace) -> Check:
    stdin = args.paths == ["-"] or (not args.paths and args.stdin_filename is not None)
    if "-" in args.paths and not stdin:
        raise ConfigError("`-` (standard input) cannot be mixed with other paths")
    if args.stdin_filename and not stdin:
        raise ConfigError("--stdin-filename needs `-` (standard input) as the only path")
    if stdin and args.watch:
        raise ConfigError("--watch cannot watch standard input")
    modes = [flag for flag, given in (("--diff", args.diff), ("--add-noqa", args.add_noqa)) if given]
    if len(modes) > 1 or (args.add_noqa and (args.fix or args.fix_only)):
        raise ConfigError(f"{' and '.join(modes + ['--fix'] * (len(modes) < 2))} cannot be combined")
    if args.statistics and args.output_format not in STATISTICS_FORMATS:
        raise ConfigError(f"--statistics prints a table or JSON; not --output-format {args.output_format}")
    if args.watch and (args.fix or args.fix_only or args.diff or args.add_noqa):
        raise ConfigError("--watch only checks; run --fix separately")
    args.paths = args.paths or ["."]
    mode = ADD_NOQA if args.add_noqa else DIFF if args.diff else FIX if args.fix or args.fix_only else CHECK
    settings = _settings(args, args.stdin_filename if stdin else args.paths[0])
    return Check(args, settings, Options(mode, args.unsafe_fixes), stdin)


def _settings(args: argparse.Namespace, near: Optional[str]) -> Settings:
    pyproject = args.config or find_pyproject(near or ".")
    settings = load_settings(pyproject, known_codes())
    for flag in ("select", "extend_select", "ignore"):
        check_selectors(getattr(args, flag) or [], known_codes(), f"--{flag.replace('_', '-')}")
    overrides = {"extend_select": settings.extend_select + tuple(args.extend_select),
                 "ignore": settings.ignore + tuple(args.ignore)}
    if args.select:
        overrides["select"] = tuple(args.select)
    if args.preview is not None:
        overrides["preview"] = args.preview
    return replace(settings, **overrides)


def _show_settings(settings: Settings, path: str) -> None:
    enabled = [code for code in known_codes() if settings.enabled(code, path)]
    rows = {
        "configuration": settings.source or "none (defaults)",
        "root": os.path.abspath(settings.root),
        "select": list(settings.select),
        "extend-select": list(settings.extend_select),
        "ignore": list(settings.ignore),
        "per-file-ignores": {pattern: list(codes) for pattern, codes in settings.per_file_ignores},
        "exclude": list(settings.exclude),
        "hot-functions": sorted(settings.hot_functions),
        "preview": settings.preview,
        f"enabled for {path}": enabled,
    }
    for key, value in rows.items():
        sys.stdout.write(f"{key} = {json.dumps(value)}\n")


def _run_check(check: Check, watching: bool = False) -> int:
    args, settings = check.args, check.settings
    if check.stdin:
        outcomes = [_check_stdin(check)]
    else:
        files, missing = discover(args.paths, settings)
        if args.show_files:
            sys.stdout.writelines(f"{path}\n" for path in files)
            return EXIT_CLEAN
        if not files and not missing and not (args.quiet or args.silent):
            sys.stderr.write("torchlint: warning: no Python files found under the given paths\n")
        outcomes = [FileOutcome(path, diagnostics=[io_error(path, problem)]) for path, problem in missing]
        outcomes += _check_files(check, files, watching)
    diagnostics = sorted((d for outcome in outcomes for d in outcome.diagnostics), key=Diagnostic.sort_key)
    errors = [error for outcome in outcomes for error in outcome.errors]
    errors += _report(check, outcomes, diagnostics, failed=bool(errors))
    for error in errors:
        sys.stderr.write(f"torchlint: error: {error}\n")
    return _exit_status(check, outcomes, diagnostics, errors)


def _check_files(check: Check, files: List[str], watching: bool) -> List[FileOutcome]:
    args = check.args
    if not watching:
        gc.freeze()  # what is loaded by now lives until exit: spare the collector rescanning it
    cache = None if args.no_cache else Cache(args.cache_dir or default_directory(check.settings), check.settings)
    show_progress = args.output_format in TEXT_FORMATS and not (args.quiet or args.silent)
    with progress_bar(len(files), enabled=show_progress) as advance:
        outcomes = run(files, check.settings, check.options, args.jobs or available_cpus(), cache, advance)
    for warning in cache.warnings if cache else ():
        sys.stderr.write(f"torchlint: warning: {warning}\n")
    return outcomes


def _check_stdin(check: Check) -> FileOutcome:
    path = check.args.stdin_filename or "-"
    data = sys.stdin.buffer.read()
    if check.settings.is_excluded(path):
        outcome = FileOutcome(path)
    else:
        outcome = process_source(path, data, check.settings, check.options, stdin=True)
    if check.options.mode in (FIX, ADD_NOQA):  # the (fixed) source goes to stdout, like ruff
        sys.stdout.buffer.write(data if outcome.new_contents is None else outcome.new_contents)
        sys.stdout.flush()
    return outcome


def _report(check: Check, outcomes: List[FileOutcome], diagnostics: List[Diagnostic], failed: bool) -> List[str]:
    """Print what the mode calls for; one-line errors for a report that cannot be written."""
    args, mode = check.args, check.options.mode
    fixed = sum(outcome.fixed for outcome in outcomes)
    # stdout carries the source itself when fixing standard input: everything else to stderr
    out = sys.stderr if check.stdin and mode in (FIX, ADD_NOQA) else sys.stdout
    if mode == DIFF:
        sys.stdout.writelines(outcome.diff for outcome in outcomes)
        if not (args.quiet or args.silent):
            report_summary([], fixed, True, sys.stderr)
        return []
    if mode == ADD_NOQA:
        if not args.silent:
            sys.stderr.write(f"Added {plural(fixed, 'noqa directive')}.\n")
        return []
    if args.silent:
        return []
    if args.fix_only:
        if fixed and not args.quiet:
            out.write(f"Fixed {plural(fixed, 'finding')}.\n")
            _show_fixes(check, outcomes, [], out)
        return []
    report = args.output_file and _open_report(args.output_file)
    if isinstance(report, str):
        return [report]
    stream = report or out
    try:
        if args.statistics:
            report_statistics(diagnostics, stream, as_json=args.output_format == "json")
        else:
            REPORTERS[args.output_format](diagnostics, stream, stream.isatty())
    finally:
        if report:
            report.close()
    if args.output_format in TEXT_FORMATS and not (args.quiet or args.statistics) and (diagnostics or fixed or not failed):
        report_summary(diagnostics, fixed, False, out)
        _show_fixes(check, outcomes, diagnostics, out)
    return []


def _open_report(path: str):
    """The report file, opened for writing, or a one-line error."""
    try:
        return open(path, "w", encoding="utf-8")
    except OSError as exc:
        return f"{path}: cannot write the report: {exc.strerror or exc}"


def _show_fixes(check: Check, outcomes: List[FileOutcome], diagnostics: List[Diagnostic], out: TextIO) -> None:
    if not check.args.show_fixes:
        return
    if check.options.mode == FIX:
        report_fixes({outcome.path: outcome.fixed_codes for outcome in outcomes}, out)
    else:
        report_fixable(diagnostics, out)


def _exit_status(check: Check, outcomes: List[FileOutcome], diagnostics: List[Diagnostic], errors: List[str]) -> int:
    args, mode = check.args, check.options.mode
    if errors:
        return EXIT_ERROR
    changed = any(outcome.fixed for outcome in outcomes)
    if mode == DIFF:
        return EXIT_FINDINGS if any(outcome.diff for outcome in outcomes) else EXIT_CLEAN
    if mode == ADD_NOQA:
        return EXIT_CLEAN
    if args.exit_non_zero_on_fix and mode == FIX and changed:
        return EXIT_FINDINGS
    if diagnostics and not (args.exit_zero or args.fix_only):
        return EXIT_FINDINGS
    return EXIT_CLEAN


@subcommand("rules")
def rules_command(argv: List[str]) -> int:
    parser = Parser(prog="torchlint rules", description="List every rule, and the codes the engine reports.")
    parser.add_argument("--output-format", "--format", choices=["text", "json"], default="text", dest="output_format")
    args = parser.parse_args(argv)
    rows = [(code.code, code.name, code.fix, False, code.summary) for code in ENGINE_CODES.values()]
    rows += [(rule.code, rule.name, rule.fix, rule.preview, rule.summary()) for rule in ALL_RULES]
    if args.output_format == "json":
        json.dump([{"code": code, "name": name, "summary": summary, "fix": fix, "preview": preview}
                   for code, name, fix, preview, summary in rows], sys.stdout, indent=2)
        sys.stdout.write("\n")
        return EXIT_CLEAN
    fixes = {code: FIX_LABELS[fix].split(" (")[0] for code, _, fix, _, _ in rows}
    names = {code: f"{name} (preview)" if preview else name for code, name, _, preview, _ in rows}
    if not sys.stdout.isatty():  # one line per rule, nothing padded: for grep and cut
        for code, _, _, _, summary in rows:
            sys.stdout.write(f"{code}  {names[code]:<38} {fixes[code]:<21} {summary}\n")
        return EXIT_CLEAN
    from rich.console import Console
    from rich.table import Table

    table = Table("Code", "Name", "Fix", "Summary", box=None)
    for code, _, _, _, summary in rows:
        table.add_row(code, names[code], fixes[code], summary)
    Console().print(table)
    return EXIT_CLEAN


@subcommand("rule", "explain")
def explain_command(argv: List[str]) -> int:
    parser = Parser(prog="torchlint rule", description="Show a rule's documentation (alias: explain).")
    parser.add_argument("code")
    args = parser.parse_args(argv)
    page = rule_page(args.code.upper())
    if page is None:
        raise ConfigError(f"unknown rule code '{args.code}' (see `torchlint rules`)")
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.markdown import Markdown

        Console().print(Markdown(page))
    else:
        sys.stdout.write(page)
    return EXIT_CLEAN


@subcommand("clean")
def clean_command(argv: List[str]) -> int:
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


@subcommand("bench")
def bench_command(argv: List[str]) -> int:
    from torchlint.bench.command import main as bench_main

    return bench_main(argv)


@subcommand("server")
def server_command(argv: List[str]) -> int:
    from torchlint.server import main as server_main

    return server_main(argv)
