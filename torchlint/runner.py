"""Run torchlint over files: read, lint or fix, write safely, collect the results."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Type

from torchlint.config import Settings
from torchlint.diagnostics import Diagnostic
from torchlint.fixes import fix_text
from torchlint.linter import LintResult, lint_text
from torchlint.notebooks import NotebookSource, is_notebook, read_notebook
from torchlint.rules import ALL_RULES
from torchlint.rules.base import Rule
from torchlint.source import SourceError, read_source, write_atomic

CHECK, FIX, DIFF = "check", "fix", "diff"


@dataclass
class FileOutcome:
    path: str
    diagnostics: List[Diagnostic] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)  # "path: message", one line each
    fixed: int = 0  # fixes applied (or, with --diff, that would be)
    diff: str = ""


@dataclass(frozen=True)
class Options:
    mode: str = CHECK
    unsafe_fixes: bool = False


def rules_for(settings: Settings, path: Optional[str] = None) -> List[Type[Rule]]:
    return [rule for rule in ALL_RULES if settings.enabled(rule.code, path)]


def read_file(path: str):
    """A ``SourceText``, or a ``NotebookSource`` whose ``text`` is its code cells."""
    return read_notebook(path) if is_notebook(path) else read_source(path)


def process_file(path: str, settings: Settings, options: Options) -> FileOutcome:
    outcome = FileOutcome(path)
    try:
        source = read_file(path)
    except SourceError as exc:
        outcome.errors.append(f"{path}: {exc}")
        return outcome
    rules = rules_for(settings, path)

    def lint(text: str) -> LintResult:
        return lint_text(text, path, rules, settings.hot_functions)

    if options.mode == CHECK:
        result = lint(source.text)
    else:
        fixed = fix_text(source.text, lint, options.unsafe_fixes)
        result = fixed.result
        outcome.errors.extend(f"{path}: {message}" for message in fixed.refused)
        if fixed.text != source.text:
            outcome.fixed = fixed.applied
            if options.mode == DIFF:
                _diff(path, source, fixed.text, outcome)
            else:
                _write_back(path, source, fixed.text, outcome)
    notebook = isinstance(source, NotebookSource)
    outcome.diagnostics = source.locate(result.diagnostics) if notebook else result.diagnostics
    outcome.errors.extend(f"{path}: {message}" for message in result.errors)
    return outcome


def _write_back(path: str, source, text: str, outcome: FileOutcome) -> None:
    try:
        current = read_file(path)
    except SourceError as exc:
        outcome.errors.append(f"{path}: not fixed: {exc}")
        outcome.fixed = 0
        return
    if current != source:
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


def run(files: Sequence[str], settings: Settings, options: Options) -> List[FileOutcome]:
    return [process_file(path, settings, options) for path in files]
