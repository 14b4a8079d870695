"""The anatomy of a rule: metadata, documentation, examples and the visitor hooks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, ClassVar, Optional, Sequence, Tuple, Union

import libcst as cst

if TYPE_CHECKING:
    from torchlint.context import FileContext, Scope


@dataclass(frozen=True)
class Invalid:
    """An example the rule must flag; ``fixed`` is the text after ``--fix --unsafe-fixes``."""

    code: str
    fixed: Optional[str] = None


@dataclass(frozen=True)
class Replacement:
    """Replace ``node``'s text with ``new`` (a node, or literal source text)."""

    node: cst.CSTNode
    new: Union[cst.CSTNode, str]


@dataclass(frozen=True)
class Finding:
    """What a rule reports; positions and edits are resolved later, only if it is kept."""

    rule: "Rule"
    node: cst.CSTNode
    message: str
    replacements: Tuple[Replacement, ...] = ()
    hot_scope: Optional["Scope"] = None  # a Scope that must turn out hot for this to count
    hot_when: Optional[Callable[["Scope"], bool]] = None  # and then also satisfy this

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
    fix: ClassVar[Optional[str]] = None  # "safe", "unsafe" or None
    # The finding fires only in files containing one of these substrings.
    triggers: ClassVar[Tuple[str, ...]] = ("torch",)

    # Documentation, in the sections every rule page has.
    what: ClassVar[str]
    why: ClassVar[str]
    example: ClassVar[str]
    use_instead: ClassVar[str]
    fix_safety: ClassVar[str]
    measured: ClassVar[str] = "Not yet measured by `torchlint bench`."

    valid: ClassVar[Sequence[str]] = ()
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
        hot_only: bool = False,
        hot_when: Optional[Callable[["Scope"], bool]] = None,
    ) -> None:
        """Report ``node``. With ``hot_only`` it counts only if the current scope is hot;
        with ``hot_when``, only if it is hot and ``hot_when(scope)`` holds once the file is
        settled (e.g. ``context.scopes.in_model_code``)."""
        self._sink(
            Finding(
                self,
                node,
                message or self.message,
                tuple(replacements),
                self.ctx.scope if hot_only or hot_when else None,
                hot_when,
            )
        )

    @classmethod
    def summary(cls) -> str:
        return cls.message
