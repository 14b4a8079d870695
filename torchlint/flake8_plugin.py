"""The flake8 entry point (``TL``): the CLI's rules and context, behind flake8's interface.

flake8 owns selection (``--select``, ``--extend-select``, ``--per-file-ignores``) and
``# noqa``, so every rule runs here and suppression is left to flake8. Syntax errors are
flake8's ``E999``; torchlint's own ``TL001`` is never reported through the plugin.
"""

from __future__ import annotations

import sys
from functools import lru_cache
from typing import FrozenSet, Iterator, List, Optional, Tuple

from torchlint import __version__
from torchlint.config import ConfigError, find_pyproject, load_settings
from torchlint.codes import SYNTAX_ERROR, known_codes
from torchlint.linter import lint_text
from torchlint.rules import ALL_RULES


@lru_cache(maxsize=None)
def _hot_functions(pyproject: Optional[str]) -> FrozenSet[str]:
    """``hot-functions`` from ``[tool.torchlint]``, so hot paths match the CLI's.

    A bad configuration is reported in one line (once per process) and the defaults are used.
    """
    try:
        return load_settings(pyproject, known_codes()).hot_functions
    except ConfigError as exc:
        sys.stderr.write(f"torchlint: error: {exc}\n")
        return frozenset()


class Plugin:
    name = "torchlint"
    version = __version__

    def __init__(self, tree: object, lines: List[str], filename: str) -> None:
        # flake8 requires ``tree`` to classify an AST plugin; torchlint parses with libcst.
        self.lines = lines
        self.filename = filename

    def run(self) -> Iterator[Tuple[int, int, str, type]]:
        hot = _hot_functions(find_pyproject(self.filename))
        result = lint_text("".join(self.lines), self.filename, ALL_RULES, hot, apply_noqa=False)
        for error in result.errors:
            sys.stderr.write(f"torchlint: error: {self.filename}: {error}\n")
        for d in result.diagnostics:
            if d.code != SYNTAX_ERROR:
                yield d.line, d.column - 1, f"{d.code} {d.message}", type(self)
