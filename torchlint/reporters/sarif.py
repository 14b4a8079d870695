"""``--format sarif``: SARIF 2.1.0, the format GitHub code scanning reads.

Columns are Unicode code points (``columnKind``), 1-based; end columns are exclusive.
A notebook finding's line is a line of its cell, not of the ``.ipynb`` file, so it gets no
region (and no fix): its cell, line and column are in the message and the properties.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Dict, List, TextIO
from urllib.parse import quote

from torchlint import DOCS_URL, HOMEPAGE, __version__
from torchlint.diagnostics import Diagnostic, Edit
from torchlint.codes import ENGINE_CODES, IO_ERROR, SYNTAX_ERROR
from torchlint.rules import ALL_RULES

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _level(code: str) -> str:
    return "error" if code in (SYNTAX_ERROR, IO_ERROR) else "warning"


def _rules() -> List[dict]:
    descriptors = [{
        "id": code.code,
        "name": code.name,
        "shortDescription": {"text": code.summary},
        "fullDescription": {"text": code.what},
        "helpUri": f"{DOCS_URL}/rules/{code.code}.md",
        "defaultConfiguration": {"level": _level(code.code)},
    } for code in ENGINE_CODES.values()]
    for rule in ALL_RULES:
        descriptors.append({
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.message},
            "fullDescription": {"text": rule.what},
            "helpUri": f"{DOCS_URL}/rules/{rule.code}.md",
            "defaultConfiguration": {"level": "warning"},
        })
    return descriptors


def artifact_location(path: str) -> dict:
    absolute = Path(os.path.abspath(path))
    try:
        relative = absolute.relative_to(Path.cwd())
    except ValueError:
        return {"uri": absolute.as_uri()}
    return {"uri": quote(relative.as_posix()), "uriBaseId": "%SRCROOT%"}


def _region(start_line: int, start_column: int, end_line: int, end_column: int) -> dict:
    region = {"startLine": start_line, "startColumn": start_column}
    if (end_line, end_column) >= (start_line, start_column):
        region.update(endLine=end_line, endColumn=end_column)
    return region


def _replacement(edit: Edit) -> dict:
    return {
        "deletedRegion": _region(edit.start[0], edit.start[1] + 1, edit.end[0], edit.end[1] + 1),
        "insertedContent": {"text": edit.content},
    }


def _result(d: Diagnostic, rule_index: Dict[str, int]) -> dict:
    location = {"artifactLocation": artifact_location(d.path)}
    result = {
        "ruleId": d.code,
        "ruleIndex": rule_index[d.code],
        "level": _level(d.code),
        "message": {"text": d.message},
        "locations": [{"physicalLocation": location}],
    }
    if d.cell is not None:
        result["message"]["text"] = f"cell {d.cell}, line {d.line}, column {d.column}: {d.message}"
        result["properties"] = {"cell": d.cell, "line": d.line, "column": d.column}
        return result
    location["region"] = _region(d.line, d.column, d.end_line, d.end_column)
    if d.fix:
        result["fixes"] = [{
            "description": {"text": f"{d.fix.applicability} fix for {d.code}"},
            "artifactChanges": [{
                "artifactLocation": location["artifactLocation"],
                "replacements": [_replacement(edit) for edit in d.fix.edits],
            }],
        }]
    return result


def sarif_log(diagnostics: List[Diagnostic]) -> dict:
    rules = _rules()
    rule_index = {rule["id"]: index for index, rule in enumerate(rules)}
    driver = {"name": "torchlint", "version": __version__, "informationUri": HOMEPAGE, "rules": rules}
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": driver},
            "columnKind": "unicodeCodePoints",
            "results": [_result(d, rule_index) for d in diagnostics],
        }],
    }


def report_sarif(diagnostics: List[Diagnostic], stream: TextIO, color: bool = False) -> None:
    json.dump(sarif_log(diagnostics), stream, indent=2)
    stream.write("\n")
