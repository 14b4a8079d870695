"""Regenerate docs/rules/<CODE>.md (rules and engine codes) and docs/benchmarks.md from the
code: python tools/gen_docs.py"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # document this checkout's rules, not an installed torchlint

from torchlint.codes import ENGINE_CODES  # noqa: E402
from torchlint.docs import benchmarks_page, page_path, render  # noqa: E402
from torchlint.rules import ALL_RULES  # noqa: E402


def write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    print(path)


if __name__ == "__main__":
    for rule in ALL_RULES:
        write(page_path(os.path.join(ROOT, "docs"), rule.code), render(rule))
    for code in ENGINE_CODES.values():
        write(page_path(os.path.join(ROOT, "docs"), code.code), code.page())
    write(os.path.join(ROOT, "docs", "benchmarks.md"), benchmarks_page())
