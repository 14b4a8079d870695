"""Lint consistency: the fixture isolates its rule. before.py is flagged with the rule's code
and no other, after.py and workload.py with nothing (every rule runs), and fixing before.py
gives after.py."""

from __future__ import annotations

import difflib
from typing import Optional, Type

from torchlint.fixes import fix_text
from torchlint.linter import lint_text
from torchlint.rules import ALL_RULES
from torchlint.rules.base import Rule


def lint_problem(rule: Type[Rule], before: str, after: str, workload: Optional[str] = None) -> Optional[str]:
    """What is inconsistent between the rule and its fixture texts (``workload``: None when
    the fixture has no workload.py), or None."""

    texts = {"before.py": before, "after.py": after, "workload.py": workload}
    results = {name: lint_text(text, name, ALL_RULES) for name, text in texts.items() if text is not None}
    for name, result in results.items():
        if result.errors or not result.parsed:
            return f"{name} cannot be linted: {(result.errors or [result.diagnostics[0].message])[0]}"
    before_codes = {d.code for d in results.pop("before.py").diagnostics}
    if rule.code not in before_codes:
        return f"before.py is not flagged with {rule.code}"
    if before_codes != {rule.code}:
        return f"before.py is also flagged with {', '.join(sorted(before_codes - {rule.code}))}"
    for name, result in results.items():
        if result.diagnostics:
            d = result.diagnostics[0]
            return f"{name} is flagged with {d.code} (line {d.line})"
    if rule.fix:
        fixed = fix_text(before, lambda text: lint_text(text, "before.py", [rule]), unsafe=True).text
        if fixed != after:
            return f"the fix of before.py differs from after.py: {_first_difference(fixed, after)}"
    return None


def _first_difference(fixed: str, after: str) -> str:
    for line in difflib.unified_diff(after.splitlines(), fixed.splitlines(), "after.py", "fixed", n=0, lineterm=""):
        if line[:1] in "+-" and not line.startswith(("+++", "---")):
            return repr(line)
    return "whitespace at the end of the file"
