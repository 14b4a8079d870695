"""Small questions about call expressions that many rules ask."""

from __future__ import annotations

from typing import Optional

import libcst as cst


def keyword(call: cst.Call, name: str) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def positional(call: cst.Call):
    return [arg for arg in call.args if arg.keyword is None and not arg.star]


def has_star_args(call: cst.Call) -> bool:
    """``*args`` or ``**kwargs``: any argument could be hiding in there."""
    return any(arg.star for arg in call.args)


def method_call(node: cst.CSTNode, *names: str) -> Optional[cst.Attribute]:
    """The ``obj.name`` of a call ``obj.name(...)`` whose method is one of ``names``."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        if not names or node.func.attr.value in names:
            return node.func
    return None


def literal_value(node: cst.BaseExpression):
    """The Python value of a simple literal (int, float, str, True/False/None), else a sentinel."""
    if isinstance(node, cst.Integer) or isinstance(node, cst.Float):
        return node.evaluated_value
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    return NOT_LITERAL


NOT_LITERAL = object()
