"""Source positions for the few nodes that are reported, computed on demand.

Resolving libcst's ``PositionProvider`` for every file costs several times the parse.
Positions are only needed for nodes that end up in a diagnostic or a fix, so they are
computed by one code generation pass over the module, and only for files that have
findings.
"""

from __future__ import annotations

import re
from typing import Dict, List, Tuple

import libcst as cst
from libcst._position import CodePosition, CodeRange
from libcst.metadata.position_provider import PositionProvidingCodegenState

Span = Tuple[Tuple[int, int], Tuple[int, int]]  # ((line, col), (line, col)); col 0-based


class _Recorder:
    """Stands in for a metadata provider: collects every node's ranges."""

    def __init__(self) -> None:
        self._computed: Dict[cst.CSTNode, CodeRange] = {}
        self.inclusive: Dict[cst.CSTNode, CodeRange] = {}


class _State(PositionProvidingCodegenState):
    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._stack[-1]
        super().after_codegen(node)
        self.provider.inclusive[node] = CodeRange(start, CodePosition(self.line, self.column))


class Positions:
    """Syntactic spans (for reporting) and whitespace-inclusive spans (for edits)."""

    def __init__(self, module: cst.Module) -> None:
        self._module = module
        self._recorder: _Recorder | None = None

    def _compute(self) -> _Recorder:
        if self._recorder is None:
            self._recorder = _Recorder()
            state = _State(
                default_indent=self._module.default_indent,
                default_newline=self._module.default_newline,
                provider=self._recorder,
            )
            self._module._codegen(state)
        return self._recorder

    def span(self, node: cst.CSTNode) -> Span:
        rng = self._compute()._computed[node]
        return (rng.start.line, rng.start.column), (rng.end.line, rng.end.column)

    def code_span(self, node: cst.CSTNode) -> Span:
        """The exact range of the text that ``module.code_for_node(node)`` produces."""
        rng = self._compute().inclusive[node]
        return (rng.start.line, rng.start.column), (rng.end.line, rng.end.column)


_NEWLINE = re.compile(r"\r\n?|\n")


def line_offsets(text: str) -> List[int]:
    """Offsets of the start of each line (index 0 is line 1), for \\n, \\r\\n and \\r."""
    return [0] + [match.end() for match in _NEWLINE.finditer(text)]


def to_offset(offsets: List[int], position: Tuple[int, int]) -> int:
    line, column = position
    return offsets[line - 1] + column
