"""One iterative traversal of a libcst tree that dispatches to many listeners.

libcst's own ``visit`` rebuilds every node it passes through; linting only needs to
read. This walker follows the dataclass fields of each node, skips whitespace and
punctuation, and calls ``visit_<Type>`` / ``leave_<Type>`` on every listener that
defines them. It is iterative, so deeply nested expressions cannot overflow the stack.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Dict, Iterable, List, Sequence, Tuple

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

_fields_cache: Dict[type, Tuple[str, ...]] = {}


def _child_fields(node_type: type) -> Tuple[str, ...]:
    names = _fields_cache.get(node_type)
    if names is None:
        names = tuple(
            f.name
            for f in dataclasses.fields(node_type)
            if not f.name.startswith(_SKIP_FIELD_PREFIXES)
        )
        _fields_cache[node_type] = names
    return names


def iter_children(node: cst.CSTNode) -> Iterable[cst.CSTNode]:
    """The meaningful child nodes of ``node``, in source order."""
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            if not isinstance(value, _SKIP_TYPES):
                yield value
        elif isinstance(value, (tuple, list)):
            for item in value:
                if isinstance(item, cst.CSTNode) and not isinstance(item, _SKIP_TYPES):
                    yield item


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
    stack: List[Tuple[cst.CSTNode, bool]] = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        node_type = type(node)
        if leaving:
            ancestors.pop()
            for handler in leave.get(node_type, ()):
                handler(node)
            continue
        for handler in visit.get(node_type, ()):
            handler(node)
        ancestors.append(node)
        stack.append((node, True))
        children = list(iter_children(node))
        for child in reversed(children):
            stack.append((child, False))
