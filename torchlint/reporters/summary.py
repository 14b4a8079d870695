"""What the text formats print after the findings: the summary, ``--statistics`` and
``--show-fixes``."""

from __future__ import annotations

import collections
import json
from typing import Counter, Dict, List, TextIO

from torchlint.codes import code_name
from torchlint.diagnostics import Diagnostic
from torchlint.reporters.text import safely_fixable


def statistics(diagnostics: List[Diagnostic]) -> List[dict]:
    """One row per code, the most frequent first: code, name, count, fixable (by ``--fix``)."""
    counts = collections.Counter(d.code for d in diagnostics)
    fixable = {d.code for d in diagnostics if safely_fixable(d)}
    return [
        {"code": code, "name": code_name(code), "count": count, "fixable": code in fixable}
        for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]


def report_statistics(diagnostics: List[Diagnostic], stream: TextIO, as_json: bool) -> None:
    rows = statistics(diagnostics)
    if as_json:
        json.dump(rows, stream, indent=2)
        stream.write("\n")
        return
    for row in rows:
        marker = "[*]" if row["fixable"] else "   "
        stream.write(f"{row['count']:>6}  {row['code']}  {marker} {row['name']}\n")


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'s' * (count != 1)}"


def report_summary(diagnostics: List[Diagnostic], fixed: int, would_fix: bool, stream: TextIO) -> None:
    """``Fixed 2 findings.`` / ``Found 3 findings.`` and how many more ``--fix`` would fix."""
    if fixed:
        stream.write(f"{'Would fix' if would_fix else 'Fixed'} {plural(fixed, 'finding')}.\n")
    if not diagnostics:
        if not would_fix:
            stream.write("All checks passed!\n")
        return
    stream.write(f"Found {plural(len(diagnostics), 'finding')}.\n")
    fixable = [d for d in diagnostics if d.fix]
    safe = sum(1 for d in fixable if safely_fixable(d))
    if safe and not fixed:
        stream.write(f"[*] {safe} fixable with `torchlint --fix`.\n")
    if len(fixable) > safe:
        stream.write(f"{len(fixable) - safe} more fixable with `--fix --unsafe-fixes`.\n")


def report_fixes(fixed: Dict[str, Counter[str]], stream: TextIO) -> None:
    """``--show-fixes`` with ``--fix``: what was fixed, file by file."""
    total = sum(sum(codes.values()) for codes in fixed.values())
    if not total:
        return
    stream.write(f"\nFixed {plural(total, 'finding')}:\n")
    for path, codes in sorted(fixed.items()):
        if codes:
            stream.write(f"- {path}:\n")
            for code, count in sorted(codes.items()):
                stream.write(f"    {count} × {code} ({code_name(code)})\n")


def report_fixable(diagnostics: List[Diagnostic], stream: TextIO) -> None:
    """``--show-fixes`` without ``--fix``: the findings a fix is offered for, by level."""
    for level, flag in (("safe", "--fix"), ("unsafe", "--fix --unsafe-fixes")):
        chosen = [d for d in diagnostics if d.fix and d.fix.applicability == level]
        if chosen:
            stream.write(f"\nFixable with `{flag}` ({plural(len(chosen), 'finding')}):\n")
            for code, count in sorted(collections.Counter(d.code for d in chosen).items()):
                stream.write(f"    {count} × {code} ({code_name(code)})\n")
