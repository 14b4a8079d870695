"""Small questions about syntax that many rules and the context ask: call arguments,
dotted names, literal values, assignment targets."""

from __future__ import annotations

from typing import FrozenSet, Iterator, List, Optional, Sequence

import libcst as cst

COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def dotted_name(node: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, None for anything else."""
    parts = []
    while type(node) is cst.Attribute:  # not isinstance: libcst's node classes are ABCs, slow to test
        parts.append(node.attr.value)
        node = node.value
    if type(node) is not cst.Name:
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def is_name(node: cst.CSTNode, name: str) -> bool:
    return type(node) is cst.Name and node.value == name


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
    if type(node) is cst.Call and type(node.func) is cst.Attribute:
        if not names or node.func.attr.value in names:
            return node.func
    return None


NOT_LITERAL = object()


def string_key(subscript: cst.Subscript) -> Optional[str]:
    """The string key of ``loaders["train"]``; None for any other index (``loaders[phase]``)."""
    index = subscript.slice[0].slice if len(subscript.slice) == 1 else None
    return literal_value(index.value) if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString) else None


def literal_value(node: cst.BaseExpression):
    """The Python value of a simple literal (int, float, str, True/False/None), else ``NOT_LITERAL``."""
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
        return node.evaluated_value
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    return NOT_LITERAL


def comparison_operands(node: cst.Comparison) -> List[cst.BaseExpression]:
    """Every operand of a comparison: ``a``, ``b`` and ``c`` of ``a < b <= c``."""
    return [node.left, *(target.comparator for target in node.comparisons)]


def target_names(target: cst.BaseExpression) -> Iterator[str]:
    """The plain names an assignment or loop target binds (``a``, ``a, (b, c)``; not ``*rest``)."""
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from target_names(element.value)


def comprehension_targets(ancestors: Sequence[cst.CSTNode]) -> FrozenSet[str]:
    """The names the comprehensions among ``ancestors`` bind (``t`` in ``[t[:, i] for t in ts]``)."""
    names = set()
    for node in ancestors:
        for_in = node.for_in if isinstance(node, COMPREHENSIONS) else None
        while for_in is not None:
            names.update(target_names(for_in.target))
            for_in = for_in.inner_for_in
    return frozenset(names)


def assigned_name(holder: Optional[cst.CSTNode], value: cst.CSTNode) -> Optional[str]:
    """``name`` when ``holder`` is ``name = value`` (or ``name: T = value``)."""
    if isinstance(holder, cst.Assign) and holder.value is value and len(holder.targets) == 1:
        target = holder.targets[0].target
    elif isinstance(holder, cst.AnnAssign) and holder.value is value:
        target = holder.target
    else:
        return None
    return target.value if isinstance(target, cst.Name) else None


def is_docstring(line: cst.CSTNode) -> bool:
    """Is ``line`` a string on its own (a docstring)?"""
    return isinstance(line, cst.SimpleStatementLine) and isinstance(line.body[0], cst.Expr) and isinstance(
        line.body[0].value, cst.BaseString
    )
