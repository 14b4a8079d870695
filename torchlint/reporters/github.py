"""``--format github``: GitHub Actions workflow commands, one annotation per finding.

Escaping follows @actions/core: ``%``, CR and LF in the message; also ``:`` and ``,`` in
property values. A notebook finding's line and column are those of its cell, which the
message names (``cell 3: ...``), as ruff does.
"""

from __future__ import annotations

from typing import List, TextIO

from torchlint.diagnostics import Diagnostic
from torchlint.codes import IO_ERROR, SYNTAX_ERROR


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(d: Diagnostic) -> str:
    level = "error" if d.code in (SYNTAX_ERROR, IO_ERROR) else "warning"
    properties = [("file", d.path), ("line", d.line), ("col", d.column)]
    if d.end_line >= d.line:
        properties += [("endLine", d.end_line), ("endColumn", d.end_column)]
    message = d.message if d.cell is None else f"cell {d.cell}: {d.message}"
    properties.append(("title", d.code))
    joined = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties)
    return f"::{level} {joined}::{escape_data(message)}"


def report_github(diagnostics: List[Diagnostic], stream: TextIO, color: bool = False) -> None:
    for d in diagnostics:
        stream.write(annotation(d) + "\n")
