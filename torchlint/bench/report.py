"""A run's results as a JSON document and as a rich table (markdown: ``results.markdown``)."""

from __future__ import annotations

from typing import Any, Dict, Sequence

from rich.table import Table

from torchlint.bench.harness import Result
from torchlint.bench.results import COLUMNS, Document, details, heading, row


def document(env: Dict[str, Any], results: Sequence[Result]) -> Document:
    return {**env, "results": [result.as_json() for result in results]}


def table(document: Document) -> Table:
    table = Table(title=f"{heading(document)}\n{details(document)}")
    for column in COLUMNS:
        table.add_column(column, no_wrap=column != "Note")
    for result in document["results"]:
        table.add_row(*row(result))
    return table
