"""Documentation rendered from the code: each rule's page, and the benchmarks page."""

from __future__ import annotations

import os
from typing import List, Optional, Type

from torchlint.bench.results import Document, committed, markdown, measured
from torchlint.rules.base import Rule

FIX_LABELS = {"safe": "safe fix available", "unsafe": "unsafe fix available (`--unsafe-fixes`)", None: "no fix"}

BENCHMARKS_INTRO = """# Benchmarks

What `torchlint bench` measured for each rule's fixture pair (`torchlint/bench/fixtures/<CODE>/`): the
median time per call of `before.py` and `after.py`, and the speedup before / after. How
the harness works and how to read the columns: [harness.md](harness.md).

This page is generated (`python tools/gen_docs.py`) from the results committed in
`torchlint/bench/results/<device>.json`, each the `--json` output of one real run named
below; the rule pages' *Measured* sections come from the same files. A rule whose
fixture was `skipped` has no figure on that machine: its effect needs hardware the
machine lacks, so it was not timed.
"""

PREVIEW_NOTE = ("\n>\n> **Preview**: off unless preview mode is on (`--preview`, or `preview = true` in "
                "`[tool.torchlint]`).")


def render(rule: Type[Rule], documents: Optional[List[Document]] = None) -> str:
    """The rule's page (``docs/rules/<CODE>.md``, ``torchlint explain``)."""
    documents = committed() if documents is None else documents
    sections = [
        f"# {rule.code} {rule.name}",
        f"> {rule.message}\n>\n> Fix: {FIX_LABELS[rule.fix]}. Source: `{rule.source_file()}`; "
        f"fixture: `torchlint/bench/fixtures/{rule.code}/`." + (PREVIEW_NOTE if rule.preview else ""),
        f"## What it does\n\n{rule.what}",
        f"## Why is it slow\n\n{rule.why}",
        f"## Example\n\n```python\n{rule.example.source}```",
        f"## Use instead\n\n```python\n{rule.use_instead.source}```",
        f"## Fix safety\n\n{rule.fix_safety}",
        f"## Measured\n\n{measured(rule.code, documents)}",
    ]
    return "\n\n".join(sections) + "\n"


def rule_page(code: str) -> Optional[str]:
    """The page of a rule or engine code (``torchlint rule CODE``, the server's hover), or None."""
    from torchlint.codes import ENGINE_CODES
    from torchlint.rules import RULES_BY_CODE

    if code in RULES_BY_CODE:
        return render(RULES_BY_CODE[code])
    return ENGINE_CODES[code].page() if code in ENGINE_CODES else None


def benchmarks_page(documents: Optional[List[Document]] = None) -> str:
    """``docs/benchmarks.md``: every committed run."""
    documents = committed() if documents is None else documents
    sections = [BENCHMARKS_INTRO] + [markdown(document) for document in documents]
    if not any(document["device"] == "cuda" for document in documents):
        sections.append("## GPU\n\nNot yet measured on GPU: no GPU has been available to the project so far, "
                        "so the fixtures that need CUDA have no GPU figure, and none is estimated here.\n")
    return "\n".join(sections)


def page_path(docs_dir: str, code: str) -> str:
    return os.path.join(docs_dir, "rules", f"{code}.md")
