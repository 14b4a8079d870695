"""``--format json`` (a list of diagnostic objects) and ``json-lines`` (one object per line)."""

from __future__ import annotations

import json
from typing import List, TextIO

from torchlint.diagnostics import Diagnostic


def report_json(diagnostics: List[Diagnostic], stream: TextIO, color: bool = False) -> None:
    json.dump([d.to_dict() for d in diagnostics], stream, indent=2)
    stream.write("\n")


def report_json_lines(diagnostics: List[Diagnostic], stream: TextIO, color: bool = False) -> None:
    for d in diagnostics:
        stream.write(json.dumps(d.to_dict()) + "\n")
