"""``# noqa`` suppression comments, in the forms flake8 and ruff accept, and the ones that
suppress nothing (TL003)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from typing import Collection, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

from torchlint.codes import SYNTAX_ERROR, UNUSED_NOQA
from torchlint.diagnostics import SAFE, Diagnostic, Edit, Fix

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


def unused_noqa(
    text: str, path: str, found: Iterable[Diagnostic], enabled: Collection[str], known: Collection[str]
) -> List[Diagnostic]:
    """TL003 for each ``# noqa: TL...`` that names an enabled code with no finding on its line
    (``found``: the findings before suppression), or a ``TL`` code that is no rule's."""
    if "noqa" not in text.lower():
        return []
    codes_by_line: Dict[int, Set[str]] = {}
    for d in found:
        codes_by_line.setdefault(d.line, set()).add(d.code)
    unused = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = _NOQA.search(line) if "#" in line else None
        if match is None or not match.group("codes"):
            continue
        codes = [(code.upper(), code) for code in _CODE.findall(match.group("codes"))]
        unknown = [code for code, _ in codes if code.startswith("TL") and code not in known]
        stale = [code for code, _ in codes if code in enabled and code not in codes_by_line.get(number, ())]
        if unknown or stale:
            unused.append(_unused_diagnostic(path, number, line, match, stale, unknown))
    return unused


def _unused_diagnostic(path: str, number: int, line: str, match, stale: List[str], unknown: List[str]) -> Diagnostic:
    parts = [f"{kind}: {', '.join(codes)}" for kind, codes in (("unused", stale), ("unknown", unknown)) if codes]
    kept = [code for code in _CODE.findall(match.group("codes")) if code.upper() not in {*stale, *unknown}]
    if kept:  # `# noqa: TL101, E501` -> `# noqa: E501`
        start, end, content = match.start("codes"), match.end("codes"), ", ".join(kept)
    elif line[match.end():].strip():  # words follow the directive: keep them as a comment
        start, end, content = match.start(), match.end(), "#"
    else:  # the whole directive goes, with the spaces before it
        start, end, content = len(line[: match.start()].rstrip()), match.end(), ""
    fix = Fix(SAFE, (Edit((number, start), (number, end), content),))
    return Diagnostic(path, number, match.start() + 1, UNUSED_NOQA, f"unused `noqa` directive ({'; '.join(parts)})",
                      number, match.end() + 1, fix)


def add_noqa(text: str, diagnostics: Sequence[Diagnostic]) -> Tuple[str, int, List[Diagnostic]]:
    """``text`` with ``# noqa: CODE`` added to (or merged into) the line of every finding; the
    number of lines changed, and the findings left: syntax errors, TL003, and findings on a
    line that cannot end in a comment (inside a multi-line string, before a backslash)."""
    crowded = _lines_without_room(text)
    wanted: Dict[int, Set[str]] = {}
    left = []
    for d in diagnostics:
        if d.code in (SYNTAX_ERROR, UNUSED_NOQA) or d.line in crowded:
            left.append(d)
        else:
            wanted.setdefault(d.line, set()).add(d.code)
    lines = text.splitlines(keepends=True)
    for number, codes in wanted.items():
        body = lines[number - 1].rstrip("\r\n")
        ending = lines[number - 1][len(body):]
        match = _NOQA.search(body) if "#" in body else None
        if match is not None and match.group("codes"):  # `# noqa: E501` -> `# noqa: E501, TL101`
            present = _CODE.findall(match.group("codes"))
            merged = present + sorted(codes - {code.upper() for code in present})
            body = body[: match.start("codes")] + ", ".join(merged) + body[match.end("codes"):]
        else:
            body = f"{body.rstrip()}  # noqa: {', '.join(sorted(codes))}"
        lines[number - 1] = body + ending
    new_text = "".join(lines)
    try:
        compile(new_text, "<noqa>", "exec", dont_inherit=True, flags=ast.PyCF_ONLY_AST)
    except (SyntaxError, ValueError):
        return text, 0, list(diagnostics)
    return new_text, len(wanted), left


def _lines_without_room(text: str) -> Set[int]:
    """Lines a comment cannot be appended to: inside a multi-line string, or continued by ``\\``."""
    crowded = {number for number, line in enumerate(text.splitlines(), start=1) if line.rstrip().endswith("\\")}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.start[0] < token.end[0] and token.type not in (tokenize.NL, tokenize.NEWLINE):
                crowded.update(range(token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError):
        return set(range(1, text.count("\n") + 2))
    return crowded
