"""The flake8 entry point (``TL``): the CLI's rules and context, behind flake8's interface.

flake8 owns selection (``--select``, ``--extend-select``, ``--per-file-ignores``) and
``# noqa``, so every rule runs here (those in preview only with ``preview = true``) and suppression is left to flake8. Syntax errors are
flake8's ``E999``; torchlint's own ``TL001`` is never reported through the plugin.
"""

from __future__ import annotations

import sys
from functools import lru_cache
from typing import Iterator, List, Optional, Tuple

from torchlint import __version__
from torchlint.config import ConfigError, Settings, find_pyproject, load_settings
from torchlint.codes import SYNTAX_ERROR, known_codes
from torchlint.linter import lint_text
from torchlint.rules import ALL_RULES


@lru_cache(maxsize=None)
def _settings(pyproject: Optional[str]) -> Settings:
    """``[tool.torchlint]``, for what flake8 does not own: ``hot-functions`` (so hot paths match
    the CLI's) and ``preview`` (the rules in preview run only when it is on).

    A bad configuration is reported in one line (once per process) and the defaults are used.
    """
    try:
        return load_settings(pyproject, known_codes())
    except ConfigError as exc:
        sys.stderr.write(f"torchlint: error: {exc}\n")
        return Settings()


class Plugin:
    name = "torchlint"
    version = __version__

    def __init__(self, tree: object, lines: List[str], filename: str) -> None:
        # flake8 requires ``tree`` to classify an AST plugin; torchlint parses with libcst.
        self.lines = lines
        self.filename = filename

    def run(self) -> Iterator[Tuple[int, int, str, type]]:
        settings = _settings(find_pyproject(self.filename))
        rules = [rule for rule in ALL_RULES if settings.preview or not rule.preview]
        result = lint_text("".join(self.lines), self.filename, rules, settings.hot_functions, apply_noqa=False)
        for error in result.errors:
            sys.stderr.write(f"torchlint: error: {self.filename}: {error}\n")
        for d in result.diagnostics:
            if d.code != SYNTAX_ERROR:
                yield d.line, d.column - 1, f"{d.code} {d.message}", type(self)
