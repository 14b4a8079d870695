"""The codes the engine reports itself, beside the rules': a file that does not parse, a file
that cannot be read, a ``# noqa`` that suppresses nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional

from torchlint.diagnostics import Diagnostic

SYNTAX_ERROR = "TL001"
IO_ERROR = "TL002"
UNUSED_NOQA = "TL003"


@dataclass(frozen=True)
class EngineCode:
    code: str
    name: str
    summary: str
    what: str
    fix: Optional[str]  # "safe", "unsafe" or None, as a rule's
    fix_safety: str
    opt_in: bool = False  # enabled only when selected by its full code

    def page(self) -> str:
        """Its page (``docs/rules/<CODE>.md``, ``torchlint explain``)."""
        selection = (
            f"Off by default: enable it with `--extend-select {self.code}` or "
            f'`extend-select = ["{self.code}"]` in `[tool.torchlint]`.'
            if self.opt_in else "Reported by the engine itself, whatever the rule selection."
        )
        return (
            f"# {self.code} {self.name}\n\n> {self.summary}\n>\n> {selection}\n\n"
            f"## What it does\n\n{self.what}\n\n## Fix safety\n\n{self.fix_safety}\n"
        )


def syntax_error(path: str, line: int, column: int, message: str) -> Diagnostic:
    first_line = message.strip().splitlines()[0] if message.strip() else "invalid syntax"
    return Diagnostic(path, line, column, SYNTAX_ERROR, f"syntax error: {first_line}", line, column)


def io_error(path: str, problem: str) -> Diagnostic:
    """``path`` could not be found, read or decoded."""
    return Diagnostic(path, 1, 1, IO_ERROR, problem, 1, 1)


ENGINE_CODES: Dict[str, EngineCode] = {
    code.code: code
    for code in (
        EngineCode(
            SYNTAX_ERROR, "syntax-error", "the file (or a notebook cell) does not parse",
            "Reports where Python's parser stops, with its message; the rest of the run goes on. In a "
            "notebook each code cell is checked on its own, so one broken cell is reported with its "
            "cell number and the other cells are still linted. The flake8 plugin leaves this to "
            "flake8's own `E999`.",
            None, "No fix: the code has to be repaired by hand.",
        ),
        EngineCode(
            IO_ERROR, "io-error", "a path that cannot be read, decoded or found",
            "Reports a path given on the command line that does not exist, and a file that cannot be "
            "read (permissions), is binary (NUL bytes), or cannot be decoded (neither UTF-8 nor its "
            "PEP 263 coding declaration; a notebook that is not valid JSON). It is a finding like "
            "ruff's `E902`, so JSON, SARIF and GitHub reports show that a file was skipped, and "
            "`--exit-zero` applies to it.",
            None, "No fix.",
        ),
        EngineCode(
            UNUSED_NOQA, "unused-noqa", "a `# noqa` code that suppresses nothing",
            "Reports `# noqa: TLnnn` codes that suppress no finding on their line (stale "
            "suppressions after a fix or a rule change) and `TL` codes that name no rule (a typo "
            "such as `TL10`). Only codes of enabled rules are judged; codes of other tools "
            "(`E501`) and a bare `# noqa` are left alone. Like ruff's `RUF100`, it is off by "
            "default.",
            "safe",
            "Safe: the fix deletes the unused codes from the comment, or the whole `# noqa` "
            "directive when no code is left; it changes a comment only.",
            opt_in=True,
        ),
    )
}


def known_codes() -> List[str]:
    """Every code torchlint reports: the engine's and the rules'."""
    from torchlint.rules import RULES_BY_CODE

    return sorted([*ENGINE_CODES, *RULES_BY_CODE])


def preview_codes() -> FrozenSet[str]:
    """The codes of the rules in preview: reported only in preview mode."""
    from torchlint.rules import ALL_RULES

    return frozenset(rule.code for rule in ALL_RULES if rule.preview)


def code_name(code: str) -> str:
    """The kebab-case name of a rule or engine code."""
    from torchlint.rules import RULES_BY_CODE

    return RULES_BY_CODE[code].name if code in RULES_BY_CODE else ENGINE_CODES[code].name
