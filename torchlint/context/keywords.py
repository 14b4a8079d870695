"""The keyword arguments a call passes, also those of a ``**kwargs`` dict built in scope.

``DataLoader(ds, shuffle=True, **loader_args)`` with ``loader_args = dict(num_workers=4,
pin_memory=True)`` a few lines up, then perhaps changed (``loader_args.update(...)``,
``loader_args["sampler"] = s``): the dict's keys are visible, so rules read them instead of
going silent. Also ``x.to(**self.tpdv)`` with ``self.tpdv = dict(device=device)``.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from torchlint.syntax import is_name, positional
from torchlint.walker import descendants, simple_statements


def keywords(ctx, call: cst.Call, hidden_ok: bool = False) -> Optional[Dict[str, cst.BaseExpression]]:
    """The keyword arguments of ``call``, with those of ``**kwargs`` when ``kwargs`` is a dict
    built in the same function (``dict(num_workers=4)``, ``{"num_workers": 4}``, then changed:
    see ``_spread``); None when some ``*args``/``**kwargs`` hide what is passed (with
    ``hidden_ok``, a hidden ``**kwargs`` is passed over: what the call shows)."""
    found: Dict[str, cst.BaseExpression] = {}
    for arg in call.args:
        if arg.star == "*":
            return None
        if arg.star == "**":
            spread, _ = _spread(ctx, arg.value)
            if spread is None:
                if hidden_ok:
                    continue
                return None
            found.update(spread)
        elif arg.keyword is not None:
            found[arg.keyword.value] = arg.value
    return found


def spread_changed(ctx, call: cst.Call) -> bool:
    """Was a ``**kwargs`` dict of ``call`` changed after it was built (perhaps in a branch:
    ``if use_cuda: kwargs.update(cuda_kwargs)``)? Then a keyword added to the call itself may
    meet a dict without the keys it needs on another path."""
    return any(arg.star == "**" and _spread(ctx, arg.value)[1] for arg in call.args)


def _spread(ctx, node: cst.BaseExpression) -> Tuple[Optional[Dict[str, cst.BaseExpression]], bool]:
    """The keys and values of a dict built in the current function (or assigned once to a
    ``self`` attribute in the class): a literal or ``dict(...)``,
    then the changes made to it by name before the current statement (``kwargs.update(
    cuda_kwargs)``, ``kwargs["num_workers"] = 4``, ``kwargs.pop("sampler")``); None where
    something hides a key. Also: whether it was changed or chosen (``a if cuda else b``), so
    that its keys differ between paths."""
    if isinstance(node, cst.Name):
        value = ctx.value_of(node.value)
    elif isinstance(node, cst.Attribute) and is_name(node.value, "self"):
        value = ctx.attribute_value(node.attr.value)  # self.tpdv = dict(dtype=torch.float32, device=device)
    else:
        value = node
    found = _literal_items(ctx, value)
    changed = isinstance(value, cst.IfExp)
    if found is None or not isinstance(node, cst.Name):
        return found, changed
    for line in _lines_before_current(ctx):
        for statement in line.body:
            change = _apply_change(ctx, statement, node.value, found)
            if change is None:
                return None, True
            changed = changed or change
    return found, changed


def _literal_items(ctx, value: Optional[cst.BaseExpression]) -> Optional[Dict[str, cst.BaseExpression]]:
    """The items of a dict literal, ``dict(...)``, or a choice of two (``{"num_workers": 1}
    if cuda else {}``: what either may hold, the first where both do)."""
    if isinstance(value, cst.IfExp):
        body, orelse = _literal_items(ctx, value.body), _literal_items(ctx, value.orelse)
        return None if body is None or orelse is None else {**orelse, **body}
    if isinstance(value, cst.Call) and ctx.qualname(value.func) == "builtins.dict" and not positional(value):
        if any(arg.star for arg in value.args):
            return None
        return {arg.keyword.value: arg.value for arg in value.args}
    if isinstance(value, cst.Dict):
        found = {}
        for element in value.elements:
            if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                return None
            found[str(element.key.evaluated_value)] = element.value
        return found
    return None


def _lines_before_current(ctx) -> List[cst.SimpleStatementLine]:
    """The statement lines of the current function (or module) before the one being visited."""
    current = next((node for node in reversed(ctx.ancestors) if isinstance(node, cst.SimpleStatementLine)), None)
    lines = []
    for line in simple_statements(ctx.scope.function.node or ctx.module):
        if line is current:
            break
        lines.append(line)
    return lines


def _apply_change(ctx, statement: cst.BaseSmallStatement, name: str, found: Dict[str, cst.BaseExpression]):
    """Apply what ``statement`` does to the dict ``name`` to ``found``: True if it changed it,
    False if it did not touch it, None if what it did cannot be seen."""
    if isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call):
        call = statement.value
        if not (isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name)
                and call.func.value.value == name):
            return False
        method, args = call.func.attr.value, positional(call)
        if method == "update" and len(args) <= 1 and not any(arg.star for arg in call.args):
            source = args[0].value if args else None
            items = _literal_items(ctx, ctx.value_of(source.value) if isinstance(source, cst.Name) else source) \
                if source is not None else {}
            if items is None:
                return None
            found.update(items)
            found.update((arg.keyword.value, arg.value) for arg in call.args if arg.keyword is not None)
            return True
        if method == "pop" and args and isinstance(args[0].value, cst.SimpleString):
            found.pop(str(args[0].value.evaluated_value), None)
            return True
        return False if method in ("get", "items", "keys", "values", "copy") else None
    if isinstance(statement, cst.AugAssign) and isinstance(statement.target, cst.Name) and statement.target.value == name:
        return None
    if isinstance(statement, cst.Del) and any(
        isinstance(node, cst.Name) and node.value == name for node in descendants(statement.target)
    ):
        return None
    changed = False
    for target in statement.targets if isinstance(statement, cst.Assign) else ():
        target = target.target
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and target.value.value == name:
            key = target.slice[0].slice if len(target.slice) == 1 else None
            if not (isinstance(key, cst.Index) and isinstance(key.value, cst.SimpleString)):
                return None
            found[str(key.value.evaluated_value)] = statement.value
            changed = True
    return changed
