"""Regenerate docs/rules/<CODE>.md from the rule classes: python tools/gen_docs.py"""

import os

from torchlint.docs import page_path, render
from torchlint.rules import ALL_RULES

DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs")

if __name__ == "__main__":
    for rule in ALL_RULES:
        path = page_path(DOCS, rule)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(render(rule))
        print(path)
