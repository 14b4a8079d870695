"""Output formats. Each reporter writes a list of diagnostics to a stream."""

from __future__ import annotations

from typing import Callable, Dict, List, TextIO

from torchlint.diagnostics import Diagnostic
from torchlint.reporters.github import report_github
from torchlint.reporters.gitlab import report_gitlab
from torchlint.reporters.json_output import report_json, report_json_lines
from torchlint.reporters.junit import report_junit
from torchlint.reporters.sarif import report_sarif
from torchlint.reporters.text import report_concise, report_text

Reporter = Callable[[List[Diagnostic], TextIO, bool], None]  # (diagnostics, stream, colour)

REPORTERS: Dict[str, Reporter] = {
    "text": report_text,
    "concise": report_concise,
    "json": report_json,
    "json-lines": report_json_lines,
    "junit": report_junit,
    "gitlab": report_gitlab,
    "sarif": report_sarif,
    "github": report_github,
}
