"""``--format gitlab``: a GitLab code quality report (a JSON list of issues, each with a
fingerprint that stays the same while the finding does, so merge requests show what changed)."""

from __future__ import annotations

import collections
import hashlib
import json
import os
from typing import Counter, List, TextIO

from torchlint.codes import IO_ERROR, SYNTAX_ERROR
from torchlint.diagnostics import Diagnostic


def report_gitlab(diagnostics: List[Diagnostic], stream: TextIO, color: bool = False) -> None:
    seen: Counter[str] = collections.Counter()
    issues = []
    for d in diagnostics:
        path = os.path.relpath(d.path).replace(os.sep, "/")
        identity = f"{path}\0{d.cell or ''}\0{d.code}\0{d.message}"
        seen[identity] += 1  # the same finding twice in a file: tell them apart by their order
        fingerprint = hashlib.sha256(f"{identity}\0{seen[identity]}".encode()).hexdigest()
        issues.append({
            "description": f"{d.code} {d.message}" if d.cell is None else f"{d.code} cell {d.cell}: {d.message}",
            "check_name": d.code,
            "fingerprint": fingerprint,
            "severity": "critical" if d.code in (SYNTAX_ERROR, IO_ERROR) else "major",
            "location": {"path": path, "lines": {"begin": d.line, "end": max(d.line, d.end_line)}},
        })
    json.dump(issues, stream, indent=2)
    stream.write("\n")
