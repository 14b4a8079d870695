"""The anatomy of a rule: metadata, documentation, examples and the visitor hooks.

Examples are dedented code blocks. In an ``Invalid`` example each line the rule must
report carries a trailing ``# expect: TL101`` marker; the markers are stripped before the
example is linted, so ``fixed`` (the text after ``--fix --unsafe-fixes``) has none.
"""

from __future__ import annotations

import inspect
import os
import re
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, ClassVar, FrozenSet, Optional, Sequence, Tuple

import libcst as cst

from torchlint.rewrite import Replacement

if TYPE_CHECKING:
    from torchlint.context import FileContext, Scope

EXPECT_MARKER = re.compile(r"\s*#\s*expect:\s*(TL\d{3}(?:[\s,]+TL\d{3})*)\s*$")


def expected_findings(text: str) -> FrozenSet[Tuple[int, str]]:
    """The (line, code) pairs marked with ``# expect: TLnnn`` in ``text``."""
    found = set()
    for number, line in enumerate(text.splitlines(), start=1):
        marker = EXPECT_MARKER.search(line)
        if marker:
            found.update((number, code) for code in re.findall(r"TL\d{3}", marker.group(1)))
    return frozenset(found)


def _block(text: str) -> str:
    """A code block written indented inside the rule class, as the code it stands for."""
    return textwrap.dedent(text).strip("\n") + "\n"


@dataclass(frozen=True)
class Valid:
    """Code the rule must not report."""

    text: str

    @property
    def source(self) -> str:
        return _block(self.text)


@dataclass(frozen=True)
class Invalid:
    """Code the rule reports on each line marked ``# expect: CODE``; ``fixed`` is the
    text after ``--fix --unsafe-fixes`` (None: the rule offers no fix here)."""

    text: str
    fixed: Optional[str] = None

    @property
    def source(self) -> str:
        return "".join(EXPECT_MARKER.sub("", line) + "\n" for line in _block(self.text).splitlines())

    @property
    def expected(self) -> FrozenSet[Tuple[int, str]]:
        return expected_findings(_block(self.text))

    @property
    def fixed_source(self) -> Optional[str]:
        return None if self.fixed is None else _block(self.fixed)


@dataclass(frozen=True)
class Finding:
    """What a rule reports; positions and edits are resolved later, only if it is kept."""

    rule: "Rule"
    node: cst.CSTNode
    message: str
    replacements: Tuple[Replacement, ...] = ()
    hot_scope: Optional["Scope"] = None  # a Scope that must turn out hot for this to count
    hot_when: Optional[Callable[["Scope"], bool]] = None  # and then also satisfy this
    applicability: Optional[str] = None  # of this finding's fix: "safe" or "unsafe" (default: the rule's)

    def counts(self) -> bool:
        """Is this finding kept, now that hot paths are settled for the whole file?"""
        if self.hot_scope is None:
            return True
        if self.hot_scope.hot_path() is None:
            return False
        return self.hot_when is None or self.hot_when(self.hot_scope)


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    message: ClassVar[str]
    preview: ClassVar[bool] = False  # off unless preview mode is on (--preview, preview = true)
    fix: ClassVar[Optional[str]] = None  # the best fix it offers: "safe", "unsafe" or None (per finding: may be less)
    # The exception the code this rule finds raises, if it always raises (TL301: ValueError):
    # a fix that makes such code run changes nothing it could compute.
    raises: ClassVar[Optional[type]] = None
    # The finding fires only in files containing one of these substrings.
    triggers: ClassVar[Tuple[str, ...]] = ("torch",)

    # Documentation, in the sections every rule page has (*Measured* comes from the
    # committed benchmark results, see torchlint/bench/results.py).
    what: ClassVar[str]
    why: ClassVar[str]
    example: ClassVar[Invalid]
    use_instead: ClassVar[Valid]
    fix_safety: ClassVar[str]

    valid: ClassVar[Sequence[Valid]] = ()
    invalid: ClassVar[Sequence[Invalid]] = ()

    def __init__(self, ctx: "FileContext", sink: Callable[[Finding], None]) -> None:
        self.ctx = ctx
        self._sink = sink

    def report(
        self,
        node: cst.CSTNode,
        message: Optional[str] = None,
        replacements: Sequence[Replacement] = (),
        *,
        hot_when: Optional[Callable[["Scope"], bool]] = None,
        applicability: Optional[str] = None,
    ) -> None:
        """Report ``node``. With ``hot_when`` it counts only if the current scope turns out
        hot and ``hot_when(scope)`` holds once the file is settled (e.g.
        ``context.scopes.in_model_code``). ``applicability`` marks this finding's fix
        "unsafe" where the rule's is safe in general. Code that runs only while exporting or
        tracing the model is never reported."""
        if self.ctx.in_export_branch():
            return
        self._sink(
            Finding(
                self,
                node,
                message or self.message,
                tuple(replacements),
                self.ctx.scope if hot_when else None,
                hot_when,
                applicability,
            )
        )

    @classmethod
    def summary(cls) -> str:
        return cls.message

    @classmethod
    def source_file(cls) -> str:
        """The rule's file, relative to the project root (``torchlint/rules/tl101_....py``)."""
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        return os.path.relpath(inspect.getfile(cls), package_root).replace(os.sep, "/")
