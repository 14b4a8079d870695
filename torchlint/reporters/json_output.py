"""``--format json``: a list of diagnostic objects."""

from __future__ import annotations

import json
from typing import List, TextIO

from torchlint.diagnostics import Diagnostic


def report_json(diagnostics: List[Diagnostic], stream: TextIO, color: bool = False) -> None:
    json.dump([d.to_dict() for d in diagnostics], stream, indent=2)
    stream.write("\n")
