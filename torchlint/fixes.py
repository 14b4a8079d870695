"""Applying fixes: non-overlapping edits, re-lint, repeat until nothing changes."""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from typing import Callable, Counter, List, Sequence, Tuple

from torchlint.diagnostics import SAFE, Diagnostic
from torchlint.linter import LintResult
from torchlint.positions import line_offsets, to_offset

MAX_PASSES = 10


@dataclass
class FixOutcome:
    text: str
    result: LintResult  # the findings that remain in ``text``
    applied: int = 0
    applied_codes: Counter[str] = field(default_factory=collections.Counter)
    refused: List[str] = field(default_factory=list)


def applicable(diagnostic: Diagnostic, unsafe: bool) -> bool:
    fix = diagnostic.fix
    return fix is not None and (unsafe or fix.applicability == SAFE)


def apply_edits(text: str, diagnostics: Sequence[Diagnostic]) -> Tuple[str, List[str]]:
    """Apply the fixes of ``diagnostics`` whose edits do not overlap an earlier fix; the
    codes of those applied."""
    offsets = line_offsets(text)
    chosen: List[Tuple[int, int, str]] = []
    taken: List[Tuple[int, int]] = []
    applied = []
    for diagnostic in diagnostics:
        spans = [(to_offset(offsets, e.start), to_offset(offsets, e.end), e.content) for e in diagnostic.fix.edits]
        if any(start < t_end and t_start < end or start == t_start for start, end, _ in spans for t_start, t_end in taken):
            continue
        chosen.extend(spans)
        taken.extend((start, end) for start, end, _ in spans)
        applied.append(diagnostic.code)
    for start, end, content in sorted(chosen, reverse=True):
        text = text[:start] + content + text[end:]
    return text, applied


def fix_text(text: str, lint: Callable[[str], LintResult], unsafe: bool) -> FixOutcome:
    """Fix ``text`` until no applicable fix remains; never return text that does not parse."""
    result = lint(text)
    outcome = FixOutcome(text, result)
    for _ in range(MAX_PASSES):
        if not result.parsed:
            break
        fixable = [d for d in result.diagnostics if applicable(d, unsafe)]
        if not fixable:
            break
        new_text, applied = apply_edits(outcome.text, fixable)
        if new_text == outcome.text:
            break
        new_result = lint(new_text)
        if not new_result.parsed:
            codes = ", ".join(sorted({d.code for d in fixable}))
            outcome.refused.append(f"fixes for {codes} would make the file unparsable; not applied")
            break
        outcome.text, outcome.result, result = new_text, new_result, new_result
        outcome.applied += len(applied)
        outcome.applied_codes.update(applied)
    return outcome
