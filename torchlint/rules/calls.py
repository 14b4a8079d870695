"""Small questions about call expressions that many rules ask."""

from __future__ import annotations

from typing import List, Optional, Sequence

import libcst as cst
from libcst._nodes.internal import CodegenState


def keyword(call: cst.Call, name: str) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def positional(call: cst.Call) -> List[cst.Arg]:
    """The plain positional arguments (no keywords, no ``*args``/``**kwargs``)."""
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


def with_keyword(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """``call`` with ``name=value``: the existing keyword's value replaced, or a new keyword."""
    existing = keyword(call, name)
    if existing is not None:
        return call.with_deep_changes(existing, value=value)
    arg = cst.Arg(
        value=value,
        keyword=cst.Name(name),
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )
    args = list(call.args)
    if args and isinstance(args[-1].comma, cst.Comma):  # a trailing comma: keep the layout
        separator = args[-2].comma if len(args) > 1 else None
        if not isinstance(separator, cst.Comma):
            separator = cst.Comma(whitespace_after=call.whitespace_before_args)
        arg = arg.with_changes(comma=args[-1].comma)
        args[-1] = args[-1].with_changes(comma=separator)
    elif args:  # the new argument takes over what followed the last one (a line break before `)`)
        arg = arg.with_changes(whitespace_after_arg=args[-1].whitespace_after_arg)
        args[-1] = args[-1].with_changes(
            comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")), whitespace_after_arg=cst.SimpleWhitespace("")
        )
    return call.with_changes(args=(*args, arg))


def literal_value(node: cst.BaseExpression):
    """The Python value of a simple literal (int, float, str, True/False/None), else a sentinel."""
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
        return node.evaluated_value
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    return NOT_LITERAL


NOT_LITERAL = object()


def code_in_block(module: cst.Module, node: cst.CSTNode, indentation: Sequence[str]) -> str:
    """The source of ``node`` as it would read inside a block indented by ``indentation``.

    ``module.code_for_node`` renders a node as if at the top level, so the continuation lines
    of a multi-line call lose their block's indentation; this keeps them.
    """
    state = CodegenState(module.default_indent, module.default_newline, indent_tokens=list(indentation))
    node._codegen(state)
    return "".join(state.tokens)
