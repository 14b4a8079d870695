"""``--format github``: GitHub Actions workflow commands, one annotation per finding.

Escaping follows @actions/core: ``%``, CR and LF in the message; also ``:`` and ``,`` in
property values. A notebook finding names its cell in the message and gets no line
(its line is a line of the cell, not of the ``.ipynb`` file).
"""

from __future__ import annotations

from typing import List, TextIO

from torchlint.diagnostics import Diagnostic
from torchlint.linter import SYNTAX_ERROR


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(d: Diagnostic) -> str:
    level = "error" if d.code == SYNTAX_ERROR else "warning"
    properties = [("file", d.path)]
    message = d.message
    if d.cell is None:
        properties += [("line", d.line), ("col", d.column)]
        if d.end_line >= d.line:
            properties += [("endLine", d.end_line), ("endColumn", d.end_column)]
    else:
        message = f"cell {d.cell}, line {d.line}, column {d.column}: {message}"
    properties.append(("title", d.code))
    joined = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties)
    return f"::{level} {joined}::{escape_data(message)}"


def report_github(diagnostics: List[Diagnostic], stream: TextIO, color: bool = False) -> None:
    for d in diagnostics:
        stream.write(annotation(d) + "\n")
