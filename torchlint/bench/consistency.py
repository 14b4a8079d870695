"""Lint consistency: before.py is flagged with the rule, after.py and workload.py are not, and
fixing before.py gives after.py."""

from __future__ import annotations

import difflib
from typing import Optional, Type

from torchlint.fixes import fix_text
from torchlint.linter import LintResult, lint_text
from torchlint.rules.base import Rule


def lint_problem(rule: Type[Rule], before: str, after: str, workload: Optional[str] = None) -> Optional[str]:
    """What is inconsistent between the rule and its fixture texts (``workload``: None when
    the fixture has no workload.py), or None."""

    def lint(text: str, name: str) -> LintResult:
        return lint_text(text, name, [rule])

    texts = {"before.py": before, "after.py": after, "workload.py": workload}
    results = {name: lint(text, name) for name, text in texts.items() if text is not None}
    for name, result in results.items():
        if result.errors or not result.parsed:
            return f"{name} cannot be linted: {(result.errors or [result.diagnostics[0].message])[0]}"
    if not any(d.code == rule.code for d in results.pop("before.py").diagnostics):
        return f"before.py is not flagged with {rule.code}"
    for name, result in results.items():
        flagged = [d.line for d in result.diagnostics if d.code == rule.code]
        if flagged:
            return f"{name} is flagged with {rule.code} (line {flagged[0]})"
    if rule.fix:
        fixed = fix_text(before, lambda text: lint(text, "before.py"), unsafe=True).text
        if fixed != after:
            return f"the fix of before.py differs from after.py: {_first_difference(fixed, after)}"
    return None


def _first_difference(fixed: str, after: str) -> str:
    for line in difflib.unified_diff(after.splitlines(), fixed.splitlines(), "after.py", "fixed", n=0, lineterm=""):
        if line[:1] in "+-" and not line.startswith(("+++", "---")):
            return repr(line)
    return "whitespace at the end of the file"
