"""Calls of the file's own functions: who calls them, and what each call passes.

Recorded while walking, in the caller's context (the kind of each argument then, and a
loader reference when the file builds DataLoaders); read once the file is walked, to type
a helper's parameters by what its callers pass and to follow loaders into the functions
that iterate them.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Union

import libcst as cst

from torchlint.context.tensors import merge_kinds
from torchlint.syntax import dotted_name, positional


@dataclass
class Argument:
    kind: Callable[[], Optional[str]]  # the argument's tensor kind at the call, worked out on demand
    ref: object = None  # a loader reference (``context.loaders.Ref``), when asked for


@dataclass
class CallSite:
    caller: object  # the scope the call is made from
    positional: List[Argument] = field(default_factory=list)
    keywords: Dict[str, Argument] = field(default_factory=dict)
    kept_on_self: bool = False  # its result is stored on ``self`` (``self.x = f()``, ``self.xs.append(f())``)


_DEF = re.compile(r"def\s+(\w+)")  # no leading \b: a literal prefix lets the regex engine skip ahead
_CLASS = re.compile(r"class\s+(\w+)")


class CallSites:
    """Every call of a function the file defines, by plain name (``helper(x)``) or as
    ``self.method(x)``, and of a class it defines (``Trainer(model, loader)``, a call of its
    ``__init__``)."""

    def __init__(self, text: str) -> None:
        self._sites: Dict[str, List[CallSite]] = defaultdict(list)
        self._defined = frozenset(_DEF.findall(text))
        self._classes = frozenset(_CLASS.findall(text))

    def note(
        self, call: cst.Call, scope, kind: Callable, ref: Optional[Callable] = None,
        kept_on_self: Optional[Callable[[], bool]] = None,
    ) -> None:
        func = call.func
        called = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
        if called in self._classes and isinstance(func, cst.Name) and call.args:
            key: Optional[str] = f"{called}.__init__"
        elif called in self._defined:
            key = _callee_key(func, scope)
        else:
            return
        if key is None:
            return

        def argument(value: cst.BaseExpression) -> Argument:
            return Argument(kind(value), ref(value) if ref is not None else None)

        site = CallSite(scope, [argument(arg.value) for arg in positional(call)])
        site.keywords = {arg.keyword.value: argument(arg.value) for arg in call.args if arg.keyword is not None}
        site.kept_on_self = kept_on_self is not None and kept_on_self()
        self._sites[key].append(site)

    def of(self, function) -> List[CallSite]:
        """The calls of ``function`` (a function scope of this file)."""
        owner = function.parent
        key = f"{owner.name}.{function.name}" if owner is not None and owner.kind == "class" else function.name
        return self._sites.get(key, [])

    def passed(self, function, name: str, where: Optional[Callable[[CallSite], bool]] = None) -> List[Argument]:
        """What each call of ``function`` (each one ``where`` holds for) passes for its parameter ``name``."""
        position = parameter_position(function, name)
        found = []
        for site in self.of(function):
            if where is not None and not where(site):
                continue
            if name in site.keywords:
                found.append(site.keywords[name])
            elif position is not None and position < len(site.positional):
                found.append(site.positional[position])
        return found

    def parameter_kind(self, function, name: str) -> Optional[str]:
        """The kind every call passes for ``name`` (None when no call, or callers disagree)."""
        passed = self.passed(function, name)
        return merge_kinds([argument.kind() for argument in passed]) if passed else None


def _callee_key(func: cst.BaseExpression, scope) -> Optional[str]:
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute) and dotted_name(func.value) == "self":
        cls = scope.enclosing_class
        return f"{cls.name}.{func.attr.value}" if cls is not None else None
    return None


def parameter_position(function, name: str) -> Optional[int]:
    """The position of parameter ``name`` among ``function``'s positional parameters (``self``
    of a method not counted), or None."""
    names = _positional_parameters(function)
    return names.index(name) if name in names else None


def parameter_at(function, where: Union[int, str]) -> Optional[str]:
    """The parameter of ``function`` an argument at position ``where`` (``self`` of a method not
    counted), or passed as keyword ``where``, binds; None if none does."""
    if isinstance(where, str):
        return where if is_parameter(function, where) else None
    names = _positional_parameters(function)
    return names[where] if where < len(names) else None


def _positional_parameters(function) -> List[str]:
    node = function.node
    if not isinstance(node, cst.FunctionDef):
        return []
    return _positional_names(node, function.parent is not None and function.parent.kind == "class")


def _positional_names(node: cst.FunctionDef, method: bool) -> List[str]:
    names = [param.name.value for param in (*node.params.posonly_params, *node.params.params)]
    return names[1:] if method and names[:1] in (["self"], ["cls"]) else names


def arguments_by_parameter(call: cst.Call, function: cst.FunctionDef) -> Dict[str, cst.BaseExpression]:
    """What ``call`` of ``function`` passes for each parameter it reaches, by position or
    keyword (``self.helper(x)`` skips the method's ``self``)."""
    names = _positional_names(function, isinstance(call.func, cst.Attribute))
    spread = any(arg.star == "*" for arg in call.args)  # positions after `*args` are not known
    passed = {} if spread else {name: arg.value for name, arg in zip(names, positional(call))}
    passed.update((arg.keyword.value, arg.value) for arg in call.args if arg.keyword is not None)
    return passed


def is_parameter(function, name: str) -> bool:
    node = function.node
    return isinstance(node, cst.FunctionDef) and any(
        param.name.value == name for param in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params)
    )
