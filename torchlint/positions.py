"""Source positions for the few nodes that are reported, computed on demand.

Resolving libcst's ``PositionProvider`` for every file costs several times the parse: it
updates a line and column for every token and records a range for every node. Positions are
only needed for the nodes that end up in a diagnostic or a fix, so they are computed by plain
code generation, only for files that have findings, and the line and column are counted only
when one of those nodes (or a node inside one) starts or ends. Given the source, only the
innermost statements holding those nodes are generated, each placed where its text occurs
once in the source; otherwise the module is generated up to the last of the nodes.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from contextlib import contextmanager
from typing import Dict, Iterable, Iterator, List, NamedTuple, Optional, Tuple

import libcst as cst

from torchlint.libcst_internals import CodegenState, CodePosition, CodeRange, generate
from torchlint.walker import iter_children

Span = Tuple[Tuple[int, int], Tuple[int, int]]  # ((line, col), (line, col)); col 0-based


class _AllFound(Exception):
    """Stops code generation once every wanted node has its range."""


class _State(CodegenState):
    """Code generation that records the ranges of the wanted nodes and of the nodes inside
    them (a node's syntactic range may be hoisted from its children's)."""

    def __init__(self, module: cst.Module, wanted: Iterable[cst.CSTNode], stop_early: bool = True) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.syntactic: Dict[cst.CSTNode, CodeRange] = {}
        self.inclusive: Dict[cst.CSTNode, CodeRange] = {}
        self._pending = {id(node) for node in wanted}
        self._stop_early = stop_early
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
            if not self._pending and self._stop_early:
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

    def __init__(self, module: cst.Module, wanted: Iterable[cst.CSTNode], source: Optional[str] = None) -> None:
        """Spans of the ``wanted`` nodes of ``module``, parsed from ``source`` when given."""
        self._module = module
        self._wanted = list(wanted)
        self._source = source
        self._ranges: Optional[Tuple[Dict[cst.CSTNode, CodeRange], Dict[cst.CSTNode, CodeRange]]] = None

    def _compute(self) -> Tuple[Dict[cst.CSTNode, CodeRange], Dict[cst.CSTNode, CodeRange]]:
        if self._ranges is None:
            self._ranges = self._by_statement() or self._by_module()
        return self._ranges

    def _by_module(self) -> Tuple[Dict[cst.CSTNode, CodeRange], Dict[cst.CSTNode, CodeRange]]:
        state = _State(self._module, self._wanted)
        try:
            generate(self._module, state)
        except _AllFound:
            pass
        return state.syntactic, state.inclusive

    def _by_statement(self) -> Optional[Tuple[Dict[cst.CSTNode, CodeRange], Dict[cst.CSTNode, CodeRange]]]:
        """The ranges from generating only the innermost statements on lines of their own that
        hold wanted nodes, each placed where its text occurs once in the source (else the
        statement holding it is tried); ``None`` without the source or when none can be placed."""
        chains = self._source is not None and _holding_lines(self._module, self._wanted)
        if not chains:
            return None
        source = self._source
        offsets = line_offsets(source)
        syntactic: Dict[cst.CSTNode, CodeRange] = {}
        inclusive: Dict[cst.CSTNode, CodeRange] = {}
        while chains:
            innermost: Dict[int, Tuple[_Line, List[cst.CSTNode]]] = {}
            for node, chain in chains:
                innermost.setdefault(id(chain[-1].statement), (chain[-1], []))[1].append(node)
            unplaced = set()
            for line, nodes in innermost.values():
                state = _State(self._module, nodes, stop_early=False)
                state.indent_tokens = list(line.indents)
                generate(line.statement, state)
                text = "".join(state.tokens)
                start = source.find(text)
                number = bisect_right(offsets, start)
                if start >= 0 and offsets[number - 1] == start and source.find(text, start + 1) < 0:
                    for ranges, into in ((state.syntactic, syntactic), (state.inclusive, inclusive)):
                        into.update((node, _moved(rng, number - 1)) for node, rng in ranges.items())
                else:
                    unplaced.add(id(line.statement))
            chains = [(node, chain[:-1]) for node, chain in chains if id(chain[-1].statement) in unplaced]
            if any(not chain for _, chain in chains):
                return None
        return syntactic, inclusive

    def span(self, node: cst.CSTNode) -> Span:
        rng = self._compute()[0][node]
        return (rng.start.line, rng.start.column), (rng.end.line, rng.end.column)

    def code_span(self, node: cst.CSTNode) -> Span:
        """The exact range of the text that ``module.code_for_node(node)`` produces."""
        rng = self._compute()[1][node]
        return (rng.start.line, rng.start.column), (rng.end.line, rng.end.column)


class _Line(NamedTuple):
    statement: cst.CSTNode  # a statement of a module or of an indented block
    indents: Tuple[str, ...]  # what the blocks holding it indent by


def _holding_lines(module: cst.Module, wanted: List[cst.CSTNode]) -> List[Tuple[cst.CSTNode, Tuple[_Line, ...]]]:
    """Each wanted node with the statements on lines of their own that hold it, outermost
    first; empty when a node is outside every statement (the module itself, its header) or
    is punctuation or whitespace."""
    pending = {id(node) for node in wanted}
    found = []
    stack = [(statement, (_Line(statement, ()),)) for statement in module.body]
    while stack:
        node, chain = stack.pop()
        if id(node) in pending:
            found.append((node, chain))
            pending.discard(id(node))
            if not pending:
                return found
        children = iter_children(node)
        if type(node) is cst.IndentedBlock:
            indents = chain[-1].indents + (module.default_indent if node.indent is None else node.indent,)
            stack.extend((child, chain + (_Line(child, indents),)) for child in children)
        else:
            stack.extend((child, chain) for child in children)
    return []


def _moved(rng: CodeRange, lines: int) -> CodeRange:
    """``rng`` of a statement generated alone, where the statement starts ``lines`` lower."""
    return CodeRange(
        CodePosition(rng.start.line + lines, rng.start.column), CodePosition(rng.end.line + lines, rng.end.column)
    )


_NEWLINE = re.compile(r"\r\n?|\n")


def line_offsets(text: str) -> List[int]:
    """Offsets of the start of each line (index 0 is line 1), for \\n, \\r\\n and \\r."""
    return [0] + [match.end() for match in _NEWLINE.finditer(text)]


def to_offset(offsets: List[int], position: Tuple[int, int]) -> int:
    line, column = position
    return offsets[line - 1] + column
