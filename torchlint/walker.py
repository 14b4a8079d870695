"""One iterative traversal of a libcst tree that dispatches to many listeners.

libcst's own ``visit`` rebuilds every node it passes through; linting only needs to
read. This walker follows the dataclass fields of each node, skips whitespace and
punctuation, and calls ``visit_<Type>`` / ``leave_<Type>`` on every listener that
defines them. It is iterative, so deeply nested expressions cannot overflow the stack.
"""

from __future__ import annotations

import collections.abc as abc
import dataclasses
import typing
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

# What a field holds, read once per node type from its annotation: a child node, a sequence
# of child nodes, a child node or nothing (``None`` / ``MaybeSentinel``), nothing that matters,
# or something to look at per value.
_NODE, _NODES, _OPTIONAL, _NOTHING, _VARIES = "node", "nodes", "optional", "nothing", "varies"


def _field_kind(annotation: object) -> str:
    origin = typing.get_origin(annotation)
    if origin is None and isinstance(annotation, type):
        if issubclass(annotation, cst.CSTNode):
            return _NOTHING if issubclass(annotation, _SKIP_TYPES) else _NODE
        if issubclass(annotation, (str, bool, int, cst.MaybeSentinel)) or annotation is type(None):
            return _NOTHING
        return _VARIES
    if origin is typing.Literal:
        return _NOTHING
    if origin in (abc.Sequence, list, tuple):
        item = _field_kind(typing.get_args(annotation)[0])
        return {_NODE: _NODES, _NOTHING: _NOTHING}.get(item, _VARIES)
    if origin is typing.Union:
        parts = [_field_kind(part) for part in typing.get_args(annotation)]
        if set(parts) <= {_NODE, _NOTHING}:
            return _NOTHING if _NODE not in parts else _NODE if _NOTHING not in parts else _OPTIONAL
    return _VARIES


def _add_varying(value: object, children: List[cst.CSTNode]) -> None:
    """Add ``value`` if it is a child node, or its items that are."""
    if isinstance(value, cst.CSTNode):
        if not isinstance(value, _SKIP_TYPES):
            children.append(value)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _add_varying(item, children)


_STATEMENTS = {
    _NODE: "    children.append(node.{0})",
    _NODES: "    children.extend(node.{0})",
    _OPTIONAL: "    if node.{0} is not None and node.{0} is not DEFAULT:\n        children.append(node.{0})",
    _VARIES: "    add_varying(node.{0}, children)",
}
_child_finders: Dict[type, Callable[[cst.CSTNode], List[cst.CSTNode]]] = {}


def _child_finder(node_type: type) -> Callable[[cst.CSTNode], List[cst.CSTNode]]:
    """A function, compiled for ``node_type`` from its field annotations, that lists the child
    nodes of a node of that type in source order (reading every field of every node
    generically costs the traversal twice as much)."""
    annotations = typing.get_type_hints(node_type)
    lines = ["def children(node):", "    children = []"]
    for field in dataclasses.fields(node_type):
        kind = _NOTHING if field.name.startswith(_SKIP_FIELD_PREFIXES) else _field_kind(annotations[field.name])
        if kind != _NOTHING:
            lines.append(_STATEMENTS[kind].format(field.name))
    lines.append("    return children")
    namespace = {"DEFAULT": cst.MaybeSentinel.DEFAULT, "add_varying": _add_varying}
    exec("\n".join(lines), namespace)
    finder = _child_finders[node_type] = namespace["children"]
    return finder


def iter_children(node: cst.CSTNode) -> List[cst.CSTNode]:
    """The meaningful child nodes of ``node``, in source order."""
    finder = _child_finders.get(type(node)) or _child_finder(type(node))
    return finder(node)


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
