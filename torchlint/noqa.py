"""``# noqa`` suppression comments, in the forms flake8 and ruff accept."""

from __future__ import annotations

import re
from typing import Dict, FrozenSet, Iterable, List, Optional

# "# noqa", "# NOQA: TL101", "# noqa:TL101,TL201 trailing words"
_NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)

ALL = frozenset({"*"})


def parse_noqa(line: str) -> Optional[FrozenSet[str]]:
    """The codes a line suppresses (``ALL`` for a bare ``# noqa``), or None."""
    if "#" not in line:
        return None
    match = _NOQA.search(line)
    if match is None:
        return None
    codes = match.group("codes")
    if not codes:
        return ALL
    return frozenset(code.upper() for code in _CODE.findall(codes))


def suppressed(code: str, noqa: Optional[FrozenSet[str]]) -> bool:
    if noqa is None:
        return False
    return noqa is ALL or "*" in noqa or code in noqa


def noqa_by_line(lines: List[str], wanted: Iterable[int]) -> Dict[int, Optional[FrozenSet[str]]]:
    """Parse only the lines that carry a diagnostic (1-based)."""
    return {n: parse_noqa(lines[n - 1]) if 0 < n <= len(lines) else None for n in set(wanted)}
