"""One iterative traversal of a libcst tree that dispatches to many listeners.

libcst's own ``visit`` rebuilds every node it passes through; linting only needs to
read. This walker follows the dataclass fields of each node, skips whitespace and
punctuation, and calls ``visit_<Type>`` / ``leave_<Type>`` on every listener that
defines them. It is iterative, so deeply nested expressions cannot overflow the stack.
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Callable, Dict, Iterator, List, Optional, Sequence

import libcst as cst

# Node types that never matter to a rule: whitespace, comments and punctuation.
_SKIP_TYPES = (
    cst.SimpleWhitespace,
    cst.ParenthesizedWhitespace,
    cst.TrailingWhitespace,
    cst.EmptyLine,
    cst.Newline,
    cst.Comment,
    cst.Comma,
    cst.Dot,
    cst.Colon,
    cst.Semicolon,
    cst.AssignEqual,
    cst.LeftParen,
    cst.RightParen,
    cst.LeftSquareBracket,
    cst.RightSquareBracket,
    cst.LeftCurlyBrace,
    cst.RightCurlyBrace,
    cst.BaseBinaryOp,
    cst.BaseBooleanOp,
    cst.BaseCompOp,
    cst.BaseUnaryOp,
    cst.BaseAugOp,
    cst.ImportStar,
)
_SKIP_FIELD_PREFIXES = ("whitespace", "lpar", "rpar", "leading_lines", "lines_after", "header", "footer")

# What a field value is, by its exact type: a child node, a sequence of values, or neither.
_NODE, _SEQUENCE, _OTHER = 1, 2, 0
_kinds: Dict[type, int] = {}
_getters: Dict[type, Callable[[cst.CSTNode], tuple]] = {}


def _kind(value_type: type) -> int:
    kind = _kinds.get(value_type)
    if kind is None:
        if issubclass(value_type, cst.CSTNode):
            kind = _OTHER if issubclass(value_type, _SKIP_TYPES) else _NODE
        elif issubclass(value_type, (tuple, list)):
            kind = _SEQUENCE
        else:
            kind = _OTHER
        _kinds[value_type] = kind
    return kind


def _getter(node_type: type) -> Callable[[cst.CSTNode], tuple]:
    """A function returning the values of ``node_type``'s fields that may hold children."""
    names = [f.name for f in dataclasses.fields(node_type) if not f.name.startswith(_SKIP_FIELD_PREFIXES)]
    if not names:
        getter = lambda node: ()  # noqa: E731
    elif len(names) == 1:
        single = operator.attrgetter(names[0])
        getter = lambda node: (single(node),)  # noqa: E731
    else:
        getter = operator.attrgetter(*names)
    _getters[node_type] = getter
    return getter


def iter_children(node: cst.CSTNode) -> List[cst.CSTNode]:
    """The meaningful child nodes of ``node``, in source order."""
    kinds = _kinds
    children: List[cst.CSTNode] = []
    getter = _getters.get(type(node)) or _getter(type(node))
    for value in getter(node):
        kind = kinds.get(type(value))
        if kind is None:
            kind = _kind(type(value))
        if kind == _NODE:
            children.append(value)
        elif kind == _SEQUENCE:
            for item in value:
                item_kind = kinds.get(type(item))
                if item_kind is None:
                    item_kind = _kind(type(item))
                if item_kind == _NODE:
                    children.append(item)
    return children


_EXPRESSION_TYPES: Dict[type, bool] = {}


def is_expression(node: cst.CSTNode) -> bool:
    """Is ``node`` an expression? (Answered once per node type: libcst's node classes are ABCs,
    slow to test with isinstance.)"""
    known = _EXPRESSION_TYPES.get(type(node))
    if known is None:
        known = _EXPRESSION_TYPES[type(node)] = issubclass(type(node), cst.BaseExpression)
    return known


def descendants(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``root`` and every meaningful node below it (depth-first, order unspecified)."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(iter_children(node))


# Scopes and loops of their own: code in them does not run once per run of what holds them.
# (Node types are looked up in sets, not tested with isinstance: libcst's node classes are ABCs,
# slow to test, and none of the concrete ones is subclassed.)
_NESTED = frozenset({cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda})


def direct_nodes(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes under ``root`` outside nested loops, functions, classes and lambdas (which
    are yielded, not entered)."""
    stack = list(iter_children(root))
    while stack:
        node = stack.pop()
        yield node
        if type(node) not in _NESTED:
            stack.extend(iter_children(node))


# Compound statements and the parts of them that hold statements.
_STATEMENT_HOLDERS = frozenset({
    cst.IndentedBlock, cst.SimpleStatementSuite, cst.If, cst.Else, cst.For, cst.While, cst.With, cst.Try,
    cst.ExceptHandler, cst.Finally, cst.Module,
})


def simple_statements(root: cst.CSTNode, enter_functions: bool = False) -> Iterator[cst.SimpleStatementLine]:
    """The simple statement lines under ``root`` in source order, without descending into
    expressions, nested classes, or (unless ``enter_functions``) nested functions."""
    for child in iter_children(root):
        child_type = type(child)
        if child_type is cst.SimpleStatementLine:
            yield child
        elif child_type is cst.FunctionDef:
            if enter_functions:
                yield from simple_statements(child.body, enter_functions)
        elif child_type in _STATEMENT_HOLDERS:
            yield from simple_statements(child, enter_functions)


def returned_values(function: cst.FunctionDef) -> List[cst.BaseExpression]:
    """What ``function``'s own ``return`` statements give, a returned tuple's elements each."""
    values: List[cst.BaseExpression] = []
    for line in simple_statements(function.body):
        for small in line.body:
            if isinstance(small, cst.Return) and isinstance(small.value, cst.Tuple):
                values.extend(element.value for element in small.value.elements)
            elif isinstance(small, cst.Return) and small.value is not None:
                values.append(small.value)
    return values


Handler = Callable[[cst.CSTNode], None]


class DispatchTable:
    """``visit_X`` / ``leave_X`` methods of the listeners, grouped by node type."""

    def __init__(self, listeners: Sequence[object]) -> None:
        self.visit: Dict[type, List[Handler]] = {}
        self.leave: Dict[type, List[Handler]] = {}
        for listener in listeners:
            for attr in dir(listener):
                prefix, _, type_name = attr.partition("_")
                if prefix not in ("visit", "leave") or not type_name:
                    continue
                node_type = getattr(cst, type_name, None)
                if not isinstance(node_type, type):
                    continue
                table = self.visit if prefix == "visit" else self.leave
                table.setdefault(node_type, []).append(getattr(listener, attr))


def walk(root: cst.CSTNode, table: DispatchTable, ancestors: List[cst.CSTNode]) -> None:
    """Visit ``root`` depth-first. ``ancestors`` holds the path to the current node."""
    visit, leave = table.visit, table.leave
    # A ``None`` on the stack means: leave the innermost ancestor.
    stack: List[Optional[cst.CSTNode]] = [root]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        node = pop()
        if node is None:
            node = ancestors.pop()
            handlers = leave.get(type(node))
            if handlers:
                for handler in handlers:
                    handler(node)
            continue
        handlers = visit.get(type(node))
        if handlers:
            for handler in handlers:
                handler(node)
        children = iter_children(node)
        if children:
            ancestors.append(node)
            push(None)
            children.reverse()
            extend(children)
        else:  # a leaf: leave it at once
            handlers = leave.get(type(node))
            if handlers:
                for handler in handlers:
                    handler(node)
