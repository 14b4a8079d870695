"""Source positions for the few nodes that are reported, computed on demand.

Resolving libcst's ``PositionProvider`` for every file costs several times the parse: it
updates a line and column for every token and records a range for every node. Positions are
only needed for the nodes that end up in a diagnostic or a fix, so they are computed by one
plain code generation pass over the module, only for files that have findings, only up to
the last of the nodes asked for, and the line and column are counted only when one of those
nodes (or a node inside one) starts or ends.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

import libcst as cst

from torchlint.libcst_internals import CodegenState, CodePosition, CodeRange, generate

Span = Tuple[Tuple[int, int], Tuple[int, int]]  # ((line, col), (line, col)); col 0-based


class _AllFound(Exception):
    """Stops code generation once every wanted node has its range."""


class _State(CodegenState):
    """Code generation that records the ranges of the wanted nodes and of the nodes inside
    them (a node's syntactic range may be hoisted from its children's)."""

    def __init__(self, module: cst.Module, wanted: Iterable[cst.CSTNode]) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.syntactic: Dict[cst.CSTNode, CodeRange] = {}
        self.inclusive: Dict[cst.CSTNode, CodeRange] = {}
        self._pending = {id(node) for node in wanted}
        self._starts: List[CodePosition] = []  # one per recorded node being generated
        self._line, self._column, self._counted = 1, 0, 0

    def _position(self) -> CodePosition:
        """Where the next token goes, counting only the tokens added since the last call."""
        if self._counted < len(self.tokens):
            segments = _NEWLINE.split("".join(self.tokens[self._counted:]))
            self._counted = len(self.tokens)
            if len(segments) == 1:
                self._column += len(segments[0])
            else:
                self._line += len(segments) - 1
                self._column = len(segments[-1])
        return CodePosition(self._line, self._column)

    def before_codegen(self, node: cst.CSTNode) -> None:
        if self._starts or id(node) in self._pending:
            self._starts.append(self._position())

    def after_codegen(self, node: cst.CSTNode) -> None:
        if not self._starts:
            return
        node_range = CodeRange(self._starts.pop(), self._position())
        self.inclusive[node] = node_range
        self.syntactic.setdefault(node, node_range)
        if id(node) in self._pending:
            self._pending.discard(id(node))
            if not self._pending:
                raise _AllFound

    @contextmanager
    def record_syntactic_position(
        self, node: cst.CSTNode, *, start_node: Optional[cst.CSTNode] = None, end_node: Optional[cst.CSTNode] = None,
    ) -> Iterator[None]:
        if not self._starts:  # not a recorded node: before_codegen pushed nothing for it
            yield
            return
        start = self._position()
        yield
        end = self._position()
        start = self.syntactic[start_node].start if start_node is not None else start
        end = self.syntactic[end_node].end if end_node is not None else end
        self.syntactic[node] = CodeRange(start, end)


class Positions:
    """Syntactic spans (for reporting) and whitespace-inclusive spans (for edits)."""

    def __init__(self, module: cst.Module, wanted: Iterable[cst.CSTNode]) -> None:
        """Spans of the ``wanted`` nodes of ``module``."""
        self._module = module
        self._wanted = wanted
        self._state: Optional[_State] = None

    def _compute(self) -> _State:
        if self._state is None:
            self._state = _State(self._module, self._wanted)
            try:
                generate(self._module, self._state)
            except _AllFound:
                pass
        return self._state

    def span(self, node: cst.CSTNode) -> Span:
        rng = self._compute().syntactic[node]
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
