"""Source positions for the few nodes that are reported, computed on demand.

Resolving libcst's ``PositionProvider`` for every file costs several times the parse.
Positions are only needed for nodes that end up in a diagnostic or a fix, so they are
computed by one code generation pass over the module, only for files that have findings,
and only up to the last of the nodes asked for.
"""

from __future__ import annotations

import re
from typing import Dict, Iterable, List, Set, Tuple

import libcst as cst

from torchlint.libcst_internals import CodePosition, CodeRange, PositionProvidingCodegenState, generate

Span = Tuple[Tuple[int, int], Tuple[int, int]]  # ((line, col), (line, col)); col 0-based


class _Ranges(Dict[cst.CSTNode, CodeRange]):
    """Syntactic ranges; once generation stops early, unfinished nodes read as empty."""

    stopped = False

    def __missing__(self, node: cst.CSTNode) -> CodeRange:
        if not self.stopped:
            raise KeyError(node)
        return _UNFINISHED


_UNFINISHED = CodeRange(CodePosition(0, 0), CodePosition(0, 0))


class _Recorder:
    """Stands in for a metadata provider: collects the ranges of the nodes passed so far."""

    def __init__(self, wanted: Iterable[cst.CSTNode]) -> None:
        self._computed = _Ranges()
        self.inclusive: Dict[cst.CSTNode, CodeRange] = {}
        self.pending: Set[int] = {id(node) for node in wanted}


class _AllFound(Exception):
    """Stops code generation once every wanted node has its range."""


class _State(PositionProvidingCodegenState):
    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._stack[-1]
        super().after_codegen(node)
        recorder = self.provider
        recorder.inclusive[node] = CodeRange(start, CodePosition(self.line, self.column))
        pending = recorder.pending
        if id(node) in pending:
            pending.discard(id(node))
            if not pending:
                recorder._computed.stopped = True
                raise _AllFound


class Positions:
    """Syntactic spans (for reporting) and whitespace-inclusive spans (for edits)."""

    def __init__(self, module: cst.Module, wanted: Iterable[cst.CSTNode]) -> None:
        """Spans of the ``wanted`` nodes of ``module`` (and of the nodes before them)."""
        self._module = module
        self._wanted = wanted
        self._recorder: _Recorder | None = None

    def _compute(self) -> _Recorder:
        if self._recorder is None:
            self._recorder = _Recorder(self._wanted)
            state = _State(
                default_indent=self._module.default_indent,
                default_newline=self._module.default_newline,
                provider=self._recorder,
            )
            try:
                generate(self._module, state)
            except _AllFound:
                pass
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
