"""The traversal's child lists: compiled per node type, they must equal a generic reading."""

import dataclasses
import textwrap

import libcst as cst

from torchlint.walker import _SKIP_FIELD_PREFIXES, _SKIP_TYPES, descendants, iter_children

EVERY_SYNTAX = textwrap.dedent('''
    from __future__ import annotations
    from os import *
    from . import sibling as alias, other
    import torch.nn as nn, numpy
    type Pair[T: int = int, *Ts, **P] = tuple[T, T]

    @decorator(1)
    async def coroutine[T](a, /, b: int = 2, *args: T, c, d=3, **kwargs) -> None:
        global counter
        async with lock as (x, y), other:
            async for item in stream:
                await item
        x: int = (yield)
        y = yield from generator()
        return lambda p, *q, r=1, **s: p


    class Model(nn.Module, metaclass=Meta):
        """Doc."""

        def forward(self, x):
            nonlocal_value = [i for i in x if i async for j in i]
            table = {k: v for k, v in items if k}
            merged = {**table, "a": 1, 'b' 'c': f"{x!r:>{width}.{precision}}"}
            first, *rest = x[1:2:3, ..., None]
            del first
            assert x, "message"
            if (n := len(x)) > 1 and not x or x is None:
                raise ValueError("bad") from None
            elif x:
                pass
            else:
                x @= x
            while True:
                break
            else:
                x = -x if x else ~x
            try:
                pass
            except* ValueError as error:
                pass
            try:
                x
            except (KeyError, IndexError):
                x
            except Exception as error:
                raise
            else:
                x
            finally:
                x
            match x:
                case [1, *others] | (2, 3) if others:
                    pass
                case {"key": value, **remaining}:
                    pass
                case Point(x=0, y=_) as point:
                    pass
                case _:
                    pass
            return x; print(x, sep="", *x, **table)
''')


def _generic_children(node):
    """Every field value that is a meaningful node, sequences flattened, in field order."""
    children = []
    for field in dataclasses.fields(node):
        if field.name.startswith(_SKIP_FIELD_PREFIXES):
            continue
        value = getattr(node, field.name)
        for item in value if isinstance(value, (tuple, list)) else [value]:
            if isinstance(item, cst.CSTNode) and not isinstance(item, _SKIP_TYPES):
                children.append(item)
    return children


def test_compiled_child_lists_equal_a_generic_reading_of_every_field():
    module = cst.parse_module(EVERY_SYNTAX)
    seen = set()
    for node in descendants(module):
        seen.add(type(node))
        assert iter_children(node) == _generic_children(node), type(node).__name__
    assert {cst.MatchAs, cst.TypeVar, cst.FormattedStringExpression, cst.ImportFrom, cst.Param} <= seen
