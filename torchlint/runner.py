"""Run torchlint over files: read, lint or fix, write safely, collect the results."""

from __future__ import annotations

import collections
import difflib
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Callable, Counter, Iterator, List, Optional, Sequence, Tuple, Type

from torchlint.cache import Cache, content_key
from torchlint.codes import UNUSED_NOQA, io_error
from torchlint.config import Settings
from torchlint.diagnostics import Diagnostic
from torchlint.fixes import fix_text
from torchlint.linter import LintResult, lint_text
from torchlint.notebooks import NotebookSource, is_notebook, parse_notebook
from torchlint.noqa import add_noqa
from torchlint.project import Elsewhere, ProjectFacts, resolve
from torchlint.rules import ALL_RULES
from torchlint.rules.base import Rule
from torchlint.source import SourceError, decode, read_bytes, write_atomic

CHECK, FIX, DIFF, ADD_NOQA = "check", "fix", "diff", "add-noqa"


@dataclass
class FileOutcome:
    path: str
    diagnostics: List[Diagnostic] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)  # "path: message", one line each
    fixed: int = 0  # fixes (or noqa comments) applied; with --diff, that would be
    fixed_codes: Counter[str] = field(default_factory=collections.Counter)  # the codes of the fixes applied
    new_contents: Optional[bytes] = None  # from stdin: the contents after the fixes
    diff: str = ""
    content_key: Optional[str] = None  # digest of the bytes that were linted; None if unread
    project: ProjectFacts = field(default_factory=ProjectFacts)  # for findings across files


@dataclass(frozen=True)
class Options:
    mode: str = CHECK
    unsafe_fixes: bool = False


def rules_for(settings: Settings, path: Optional[str] = None) -> List[Type[Rule]]:
    return [rule for rule in ALL_RULES if settings.enabled(rule.code, path)]


def process_file(
    path: str, settings: Settings, options: Options, elsewhere: Optional[Elsewhere] = None
) -> FileOutcome:
    try:
        data = read_bytes(path)
    except SourceError as exc:
        return FileOutcome(path, diagnostics=[io_error(path, str(exc))])
    return process_source(path, data, settings, options, elsewhere=elsewhere)


def process_source(
    path: str, data: bytes, settings: Settings, options: Options, stdin: bool = False,
    elsewhere: Optional[Elsewhere] = None,
) -> FileOutcome:
    """Lint (or fix, diff, add ``# noqa`` to) ``data``, the contents of ``path``. From ``stdin``,
    nothing is written: the new contents are kept in the outcome. ``elsewhere``: what the
    other files of the run tell this one (``torchlint.project``)."""
    outcome = FileOutcome(path)
    try:
        source = parse_notebook(data) if is_notebook(path) else decode(data)
    except SourceError as exc:
        outcome.diagnostics.append(io_error(path, str(exc)))
        return outcome
    outcome.content_key = content_key(data)
    rules = rules_for(settings, path)
    report_unused_noqa = settings.enabled(UNUSED_NOQA, path)

    def lint(text: str) -> LintResult:
        return lint_text(
            text, path, rules, settings.hot_functions, report_unused_noqa=report_unused_noqa, elsewhere=elsewhere
        )

    text = source.text
    if options.mode in (CHECK, ADD_NOQA):
        result = lint(text)
        if options.mode == ADD_NOQA:
            text, outcome.fixed, result.diagnostics = add_noqa(text, result.diagnostics)
    else:
        fixed = fix_text(text, lint, options.unsafe_fixes)
        result, text = fixed.result, fixed.text
        outcome.errors.extend(f"{path}: {message}" for message in fixed.refused)
        outcome.fixed, outcome.fixed_codes = fixed.applied, fixed.applied_codes
    if text != source.text:
        if options.mode == DIFF:
            _diff(path, source, text, outcome)
        elif stdin:
            _keep_new_contents(path, source, text, outcome)
        else:
            _write_back(path, data, source, text, outcome)
    if isinstance(source, NotebookSource):
        outcome.diagnostics = source.locate(result.diagnostics) + source.cell_syntax_errors(path)
    else:
        outcome.diagnostics = result.diagnostics
        outcome.project = result.project
    outcome.errors.extend(f"{path}: {message}" for message in result.errors)
    return outcome


def _keep_new_contents(path: str, source, text: str, outcome: FileOutcome) -> None:
    try:
        outcome.new_contents = source.encode(text)
    except (SourceError, UnicodeEncodeError) as exc:
        outcome.errors.append(f"{path}: cannot encode the fixed source: {exc}")
        outcome.fixed = 0


def _write_back(path: str, data: bytes, source, text: str, outcome: FileOutcome) -> None:
    try:
        current = read_bytes(path)
    except SourceError as exc:
        outcome.errors.append(f"{path}: not fixed: {exc}")
        outcome.fixed = 0
        return
    if current != data:
        outcome.errors.append(f"{path}: changed on disk while torchlint ran; not fixed")
        outcome.fixed = 0
        return
    try:
        write_atomic(path, source.encode(text))
    except SourceError as exc:
        outcome.errors.append(f"{path}: {exc}")
        outcome.fixed = 0
    except (OSError, UnicodeEncodeError) as exc:
        outcome.errors.append(f"{path}: cannot write the fix: {exc}")
        outcome.fixed = 0


def _diff(path: str, source, text: str, outcome: FileOutcome) -> None:
    if not isinstance(source, NotebookSource):
        outcome.diff = unified_diff(path, source.text, text)
        return
    try:
        changes = source.changed_cells(text)
    except SourceError as exc:
        outcome.errors.append(f"{path}: {exc}")
        outcome.fixed = 0
        return
    outcome.diff = "".join(unified_diff(f"{path}:cell {n}", old, new) for n, old, new in changes)


def unified_diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), path, path
    )
    return "".join(line if line.endswith(("\n", "\r")) else line + "\n" for line in lines)


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


Progress = Callable[[int], None]  # called with the number of files just finished


def run(
    files: Sequence[str],
    settings: Settings,
    options: Options,
    jobs: int = 1,
    cache: Optional[Cache] = None,
    progress: Optional[Progress] = None,
) -> List[FileOutcome]:
    """One outcome per file, in the order of ``files``, whatever ``jobs`` is.

    Unchanged files are answered from ``cache`` when only checking; ``--fix`` and
    ``--diff`` never trust it, since they may write the files.
    """
    cache = cache if options.mode == CHECK else None
    outcomes: List[Optional[FileOutcome]] = [None] * len(files)
    todo: List[int] = []
    for index, path in enumerate(files):
        key = _content_key(path) if cache else None
        cached = cache.load(path, key) if cache and key else None
        if cached is None:
            todo.append(index)
        else:
            outcomes[index] = FileOutcome(path, **cached)
    if progress and len(todo) < len(files):
        progress(len(files) - len(todo))
    for index, outcome in _lint_files([files[i] for i in todo], settings, options, jobs):
        index = todo[index]
        outcomes[index] = outcome
        if cache and outcome.content_key:  # keyed on the very bytes that were linted
            cache.store(outcome.path, outcome.content_key, outcome.diagnostics, outcome.errors, outcome.project)
        if progress:
            progress(1)
    _relint_reached(outcomes, settings, options, jobs)  # type: ignore[arg-type]
    return outcomes  # type: ignore[return-value]


def _relint_reached(outcomes: List[FileOutcome], settings: Settings, options: Options, jobs: int) -> None:
    """Lint again the files the others have news for (``torchlint.project``: functions hot
    code calls, facts their rules asked for), until no file has more (what a file learns may
    be news for another: a loader class, then the factory returning it, then its caller); a
    second fixing pass adds to the first's count. Newer news wins over older: a fix may change
    what a file offers (a loader pinned by one file's fix lets another's moves not block)."""
    given = [Elsewhere()] * len(outcomes)  # what each file was last linted with
    for _ in range(MAX_ROUNDS):
        news = [elsewhere | given[index] for index, elsewhere in enumerate(resolve([o.project for o in outcomes]))]
        todo = [(index, elsewhere) for index, elsewhere in enumerate(news) if elsewhere != given[index]]
        if not todo:
            return
        paths = [outcomes[index].path for index, _ in todo]
        for position, outcome in _lint_files(paths, settings, options, jobs, [elsewhere for _, elsewhere in todo]):
            index, given[index] = todo[position]
            first = outcomes[index]
            if options.mode in (FIX, ADD_NOQA):
                outcome.fixed += first.fixed
                outcome.fixed_codes += first.fixed_codes
            outcomes[index] = outcome


def _content_key(path: str) -> Optional[str]:
    try:
        return content_key(read_bytes(path))
    except SourceError:
        return None


def process_file_safely(
    path: str, settings: Settings, options: Options, elsewhere: Optional[Elsewhere] = None
) -> FileOutcome:
    """``process_file`` that turns an unexpected exception into a one-line error for the file."""
    try:
        return process_file(path, settings, options, elsewhere)
    except Exception as exc:
        return FileOutcome(path, errors=[f"{path}: internal error: {type(exc).__name__}: {exc}"])


def _process_chunk(
    paths: Sequence[str], settings: Settings, options: Options, news: Sequence[Optional[Elsewhere]]
) -> List[FileOutcome]:
    return [process_file_safely(path, settings, options, elsewhere) for path, elsewhere in zip(paths, news)]


MAX_ROUNDS = 4  # of linting again with news from other files
MIN_FILES_PER_JOB = 4
MAX_CHUNK = 16


def _lint_files(
    paths: Sequence[str], settings: Settings, options: Options, jobs: int,
    elsewhere: Optional[Sequence[Elsewhere]] = None,
) -> Iterator[Tuple[int, FileOutcome]]:
    """(index, outcome) for every path, in completion order; worker processes if worth it.
    ``elsewhere``: for each path, what the other files of the run tell it."""
    news: Sequence[Optional[Elsewhere]] = elsewhere or [None] * len(paths)
    jobs = min(jobs, len(paths) // MIN_FILES_PER_JOB)
    if jobs <= 1:
        for index, path in enumerate(paths):
            yield index, process_file_safely(path, settings, options, news[index])
        return
    size = max(1, min(MAX_CHUNK, len(paths) // (jobs * 8)))
    chunks = [range(start, min(start + size, len(paths))) for start in range(0, len(paths), size)]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {
            pool.submit(_process_chunk, [paths[i] for i in chunk], settings, options, [news[i] for i in chunk]): chunk
            for chunk in chunks
        }
        for future in as_completed(futures):
            chunk = futures[future]
            try:
                outcomes = future.result()
            except Exception as exc:  # a worker died (killed, out of memory): report its files
                outcomes = [
                    FileOutcome(paths[i], errors=[f"{paths[i]}: internal error: worker failed: {type(exc).__name__}"])
                    for i in chunk
                ]
            yield from zip(chunk, outcomes)
