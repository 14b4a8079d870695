"""Building the text of fixes: nodes rendered where they stand, keywords added to calls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence, Union

import libcst as cst

from torchlint.libcst_internals import CodegenState, generate
from torchlint.syntax import keyword


@dataclass(frozen=True)
class Replacement:
    """Replace ``node``'s text with ``new`` (a node, or literal source text)."""

    node: cst.CSTNode
    new: Union[cst.CSTNode, str]


def attribute(node: cst.BaseExpression, name: str) -> cst.Attribute:
    """``node.name``."""
    return cst.Attribute(value=node, attr=cst.Name(name))


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


def code_in_block(module: cst.Module, node: cst.CSTNode, indentation: Sequence[str]) -> str:
    """The source of ``node`` as it would read inside a block indented by ``indentation``.

    ``module.code_for_node`` renders a node as if at the top level, so the continuation lines
    of a multi-line call lose their block's indentation; this keeps them.
    """
    state = CodegenState(module.default_indent, module.default_newline, indent_tokens=list(indentation))
    generate(node, state)
    return "".join(state.tokens)
