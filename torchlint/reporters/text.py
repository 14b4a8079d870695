"""``--format text`` and ``concise``: ``path:line:col: CODE message``.

On a terminal, text output is coloured and shows a code frame under each finding.
"""

from __future__ import annotations

from typing import Dict, List, TextIO

from torchlint.diagnostics import SAFE, Diagnostic


def location(d: Diagnostic) -> str:
    where = f"{d.path}:cell {d.cell}:" if d.cell is not None else f"{d.path}:"
    return f"{where}{d.line}:{d.column}"


def safely_fixable(d: Diagnostic) -> bool:
    """Marked ``[*]``: fixed by a plain ``--fix`` (unsafe fixes need ``--unsafe-fixes``)."""
    return d.fix is not None and d.fix.applicability == SAFE


def plain_line(d: Diagnostic) -> str:
    return f"{location(d)}: {d.code} {d.message}"


def report_concise(diagnostics: List[Diagnostic], stream: TextIO, color: bool = False) -> None:
    for d in diagnostics:
        stream.write(plain_line(d) + "\n")


def report_text(diagnostics: List[Diagnostic], stream: TextIO, color: bool = False) -> None:
    if not color:
        report_concise(diagnostics, stream)
        return
    from rich.console import Console
    from rich.markup import escape

    # emoji=False: rich would otherwise render `x.py:100:` as `x.py💯` and `":smile:"` in source lines.
    console = Console(file=stream, highlight=False, soft_wrap=True, emoji=False)
    sources: Dict[str, List[str]] = {}
    for d in diagnostics:
        marker = " [cyan]\\[*][/]" if safely_fixable(d) else ""
        console.print(
            f"[bold]{escape(location(d))}[/]: [bold red]{d.code}[/]{marker} {escape(d.message)}"
        )
        if d.cell is None and d.path not in sources:
            sources[d.path] = _read_lines(d.path)
        lines = sources[d.path] if d.cell is None else []
        if 0 < d.line <= len(lines):
            text = lines[d.line - 1].rstrip("\r\n")
            width = max(1, (d.end_column - d.column) if d.end_line == d.line else len(text) - d.column + 1)
            console.print(f"[blue]{d.line:>5} |[/] {escape(text)}")
            console.print(f"[blue]      |[/] {' ' * (d.column - 1)}[red]{'^' * width}[/]")


def _read_lines(path: str) -> List[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.readlines()
    except OSError:
        return []
