"""Run torchlint over files: read, lint or fix, write safely, collect the results."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Type

from torchlint.config import Settings
from torchlint.diagnostics import Diagnostic
from torchlint.fixes import fix_text
from torchlint.linter import LintResult, lint_text
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


def process_file(path: str, settings: Settings, options: Options) -> FileOutcome:
    outcome = FileOutcome(path)
    try:
        source = read_source(path)
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
                outcome.diff = unified_diff(path, source.text, fixed.text)
            else:
                _write_back(path, source, fixed.text, outcome)
    outcome.diagnostics = result.diagnostics
    outcome.errors.extend(f"{path}: {message}" for message in result.errors)
    return outcome


def _write_back(path: str, source, text: str, outcome: FileOutcome) -> None:
    try:
        current = read_source(path)
    except SourceError as exc:
        outcome.errors.append(f"{path}: not fixed: {exc}")
        outcome.fixed = 0
        return
    if current.text != source.text:
        outcome.errors.append(f"{path}: changed on disk while torchlint ran; not fixed")
        outcome.fixed = 0
        return
    try:
        write_atomic(path, source.encode(text))
    except (OSError, UnicodeEncodeError) as exc:
        outcome.errors.append(f"{path}: cannot write the fix: {exc}")
        outcome.fixed = 0


def unified_diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), path, path
    )
    return "".join(line if line.endswith(("\n", "\r")) else line + "\n" for line in lines)


def run(files: Sequence[str], settings: Settings, options: Options) -> List[FileOutcome]:
    return [process_file(path, settings, options) for path in files]
