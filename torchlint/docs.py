"""A rule's documentation page, rendered from the rule class itself."""

from __future__ import annotations

import os
from typing import Type

from torchlint.rules.base import Rule

FIX_LABELS = {"safe": "safe fix available", "unsafe": "unsafe fix available (`--unsafe-fixes`)", None: "no fix"}


def render(rule: Type[Rule]) -> str:
    sections = [
        f"# {rule.code} {rule.name}",
        f"> {rule.message}\n>\n> Fix: {FIX_LABELS[rule.fix]}.",
        f"## What it does\n\n{rule.what}",
        f"## Why is it slow\n\n{rule.why}",
        f"## Example\n\n```python\n{rule.example}\n```",
        f"## Use instead\n\n```python\n{rule.use_instead}\n```",
        f"## Fix safety\n\n{rule.fix_safety}",
        f"## Measured\n\n{rule.measured}",
    ]
    return "\n\n".join(sections) + "\n"


def page_path(docs_dir: str, rule: Type[Rule]) -> str:
    return os.path.join(docs_dir, "rules", f"{rule.code}.md")
