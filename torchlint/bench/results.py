"""Committed benchmark results: what they say, as table rows, markdown and rule pages.

``torchlint bench --json`` writes one document per run: the machine (device and its name,
torch/CUDA versions, threads), the run (size, repeats, date, commit, command) and one
result per rule. The documents committed under ``torchlint/bench/results/`` (a full run
per device kind, and runs of rules added since) are the only source of every figure in ``docs/benchmarks.md``, in each rule
page's *Measured* section and in ``torchlint explain``. Reading them needs neither torch
nor rich.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional

RESULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
DEVICE_KINDS = ("cpu", "cuda")  # results/<kind>.json and results/<kind>-<part>.json
COLUMNS = ("Rule", "Kind", "Status", "Before", "After", "Effect", "Paired range", "Memory", "Outputs", "Lint", "Note")
NOT_ON_GPU = "**GPU**: not yet measured on GPU (no GPU has been available to the project so far)."

Document = Dict[str, Any]


def committed(directory: str = RESULTS_DIR) -> List[Document]:
    """The committed documents, CPU first: ``<kind>.json``, then any ``<kind>-<part>.json``
    (a later run of some rules only); a device kind never measured has none."""
    names = sorted(os.listdir(directory)) if os.path.isdir(directory) else []
    documents = []
    for kind in DEVICE_KINDS:
        parts = [name for name in names if name.startswith(f"{kind}-") and name.endswith(".json")]
        for name in [f"{kind}.json"] * (f"{kind}.json" in names) + parts:
            with open(os.path.join(directory, name), encoding="utf-8") as handle:
                documents.append(json.load(handle))
    return documents


def seconds(value: Optional[float]) -> str:
    """Three significant figures in a readable unit: 1.30 ms, 212 ms, 4.05 s."""
    if value is None:
        return ""
    unit, scale = next(((u, s) for u, s in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)) if value >= s), ("ns", 1e-9))
    scaled = value / scale
    decimals = 0 if scaled >= 100 else 1 if scaled >= 10 else 2
    return f"{scaled:.{decimals}f} {unit}"


def _yes_no(value: Optional[bool]) -> str:
    return "" if value is None else "yes" if value else "no"


def effect(result: Dict[str, Any]) -> str:
    """The headline figure in the words of its kind: a speedup (before / after), a fix's
    cost (after / before), or a correctness verdict (in the note)."""
    if result.get("ratio") is None:
        return "see note" if result.get("verdict") else ""
    if result.get("kind") == "cost":
        return f"costs {1 / result['ratio']:.2f}x"
    return f"{result['ratio']:.2f}x"


def paired_range(result: Dict[str, Any]) -> str:
    if result.get("ratio") is None:
        return ""
    low, high = result["paired_min"], result["paired_max"]
    if result.get("kind") == "cost":
        low, high = 1 / high, 1 / low
    return f"{low:.2f}-{high:.2f}x"


def megabytes(value: Optional[int]) -> str:
    return "" if value is None else f"{value / 2**20:.1f} MiB"


def memory(result: Dict[str, Any]) -> str:
    if result.get("before_bytes") is None:
        return ""
    return f"{megabytes(result['before_bytes'])} -> {megabytes(result['after_bytes'])}"


def row(result: Dict[str, Any]) -> List[str]:
    """One result as the cells of ``COLUMNS``."""
    note = result.get("verdict") or result["reason"] or ""
    return [
        result["code"],
        result.get("kind") or "",
        result["status"],
        seconds(result["before_s"]),
        seconds(result["after_s"]),
        effect(result),
        paired_range(result),
        memory(result),
        _yes_no(result["outputs_match"]),
        _yes_no(result["lint_consistent"]),
        note,
    ]


def sweep_line(result: Dict[str, Any]) -> Optional[str]:
    """``TL502, epochs: 1 -> 1.10x, 2 -> 1.90x, ...`` for a swept fixture, else None."""
    sweep = result.get("sweep")
    if not sweep or not sweep["points"]:
        return None
    points = ", ".join(
        f"{point['value']} -> {effect(dict(result, ratio=point['ratio']))}"
        + (f" ({megabytes(point['before_bytes'])} -> {megabytes(point['after_bytes'])})"
           if point.get("before_bytes") is not None else "")
        for point in sweep["points"]
    )
    return f"{result['code']}, {sweep['name']}: {points} (the row reports {sweep['headline']})"


def heading(document: Document) -> str:
    if document["device"] == "cuda":
        return f"CUDA: {document['device_name']}"
    threads = document["threads"]
    return f"CPU: {document['device_name']}, {document['cpus']} cores, {threads} torch thread{'s' * (threads != 1)}"


def details(document: Document) -> str:
    versions = f"torch {document['torch']}"
    if document.get("cuda"):
        versions += f", CUDA {document['cuda']}, cuDNN {document.get('cudnn')}"
    commit = f", commit {document['commit']}" if document.get("commit") else ""
    return (f"{versions}, Python {document['python']}, size `{document['size']}`, "
            f"{document['repeats']} repeats, {document['date']}{commit}")


def markdown(document: Document) -> str:
    """One run as a section of ``docs/benchmarks.md``."""
    lines = [
        f"## {heading(document)}",
        "",
        f"{details(document)}. Generated by `{document['command']}`.",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row(result)) + " |"
              for result in document["results"]]
    sweeps = [line for line in map(sweep_line, document["results"]) if line]
    if sweeps:
        lines += ["", "Sweeps (each point measured like a row):", ""] + [f"- {line}" for line in sweeps]
    return "\n".join(lines) + "\n"


def _result(document: Document, code: str) -> Optional[Dict[str, Any]]:
    return next((result for result in document["results"] if result["code"] == code), None)


def _figure(document: Document, result: Dict[str, Any]) -> str:
    where = f"**{'GPU' if document['device'] == 'cuda' else 'CPU'}** ({heading(document).split(': ', 1)[1]}; {details(document)})"
    if result["status"] != "measured":
        return f"{where}: {result['status']}, {result['reason']}."
    if result.get("ratio") is None:  # a correctness verdict
        return f"{where}: {result['verdict']}."
    kind = "the fix costs" if result.get("kind") == "cost" else "speedup"
    text = (f"{where}: {kind} **{effect(result).replace('costs ', '')}** ({seconds(result['before_s'])} -> "
            f"{seconds(result['after_s'])} per step, paired range {paired_range(result)})")
    if result.get("before_bytes") is not None:
        text += f"; peak memory of a step {memory(result)}"
    sweep = sweep_line(result)
    return text + (f". Sweep: {sweep.split(', ', 1)[1]}." if sweep else ".")


def measured(code: str, documents: List[Document]) -> str:
    """The *Measured* section of a rule page, from the committed results."""
    found = [(document, _result(document, code)) for document in documents]
    found = [(document, result) for document, result in found if result is not None]
    paragraphs = [_figure(document, result) for document, result in found]
    if not any(document["device"] == "cuda" for document, _ in found):
        paragraphs.append(NOT_ON_GPU)
    fixture = next((result.get("fixture") for _, result in found if result.get("fixture")), None)
    if fixture:
        paragraphs.append(f"The fixture, `torchlint/bench/fixtures/{code}/`: {fixture}")
    paragraphs.append("How these are measured: [the harness](../harness.md); all runs: [benchmarks](../benchmarks.md).")
    return "\n\n".join(paragraphs)
