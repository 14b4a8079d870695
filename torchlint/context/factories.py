"""Tensor factories: which torch calls create a tensor, and where it lands.

A factory called without ``device=`` builds its tensor in host memory (the legacy
``torch.FloatTensor(...)`` constructors always do). Shared by tensor-likeness and the
TL1xx rules.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchlint.syntax import dotted_name

# Window functions for spectral transforms (`torch.hann_window(n_fft)`) are factories too.
WINDOWS = frozenset("hann_window hamming_window blackman_window bartlett_window kaiser_window".split())
FACTORIES = frozenset(
    "randperm randn rand randint zeros ones empty full arange linspace logspace eye tensor as_tensor".split()
) | WINDOWS
# Factories that draw random numbers: made on another device, they draw from another generator.
RANDOM_FACTORIES = frozenset("randperm randn rand randint".split())
# Constructors that copy their data argument (a tensor argument keeps its device).
DATA_FACTORIES = frozenset({"tensor", "as_tensor"})
LEGACY_CONSTRUCTORS = frozenset(
    "Tensor FloatTensor DoubleTensor HalfTensor BFloat16Tensor LongTensor IntTensor ShortTensor "
    "CharTensor ByteTensor BoolTensor".split()
)


# `Variable(t)` returns `t` itself since PyTorch 0.4; older code wraps every tensor in one.
VARIABLE = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})


def variable_of(ctx, node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The tensor ``Variable(t, ...)`` wraps, if ``node`` is such a call."""
    if type(node) is not cst.Call or not node.args or node.args[0].keyword is not None or node.args[0].star:
        return None
    return node.args[0].value if ctx.qualname(node.func) in VARIABLE else None


def factory_name(qualname: Optional[str]) -> Optional[str]:
    """``randn`` for ``torch.randn``, ``FloatTensor`` for ``torch.FloatTensor``, else None."""
    if qualname is None or not qualname.startswith("torch."):
        return None
    name = qualname[6:]
    return name if name in FACTORIES or name in LEGACY_CONSTRUCTORS else None


# Factories whose result is always one-dimensional.
_VECTOR_FACTORIES = frozenset("randperm arange linspace logspace".split()) | WINDOWS
# Factories that take their shape as positional sizes (``torch.zeros(n)``) as well as a tuple.
_SIZED_FACTORIES = frozenset("randn rand zeros ones empty".split())


def one_dimensional(name: str, call: cst.Call) -> bool:
    """Does factory ``name`` called as ``call`` build a vector: ``torch.randperm(n)``,
    ``torch.randint(0, n, (1,))``, ``torch.zeros(n)``? (An element ``v[i]`` of one is 0-d.)"""
    if name in _VECTOR_FACTORIES:
        return True
    size = next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "size"), None)
    positional = [arg.value for arg in call.args if arg.keyword is None]
    if any(arg.star for arg in call.args):
        return False
    if size is None and name == "randint" and len(positional) in (2, 3):
        size = positional[-1]
    elif size is None and name in _SIZED_FACTORIES and positional:
        if len(positional) == 1 and isinstance(positional[0], (cst.Integer, cst.Subscript, cst.BinaryOperation)):
            return True  # torch.zeros(x.shape[0]); a name may hold a shape tuple
        size = positional[0] if len(positional) == 1 else None
    return isinstance(size, (cst.Tuple, cst.List)) and len(size.elements) == 1 and not isinstance(
        size.elements[0], cst.StarredElement)


def builds_empty(name: str, call: cst.Call) -> bool:
    """Does factory ``name`` called as ``call`` get a zero size (``torch.zeros(0, d)``,
    ``torch.empty([0])``, ``torch.FloatTensor(0)``): a tensor with no data?"""
    if name not in _SIZED_FACTORIES and name != "full" and name not in LEGACY_CONSTRUCTORS:
        return False
    given = [arg for arg in call.args if arg.keyword is None and not arg.star]
    given = given[:1] if name == "full" else given  # full(size, value)
    sizes = [
        element.value for arg in given
        for element in (arg.value.elements if isinstance(arg.value, (cst.Tuple, cst.List)) else (arg,))
    ]
    return any(isinstance(size, cst.Integer) and size.evaluated_value == 0 for size in sizes)


def passes(call: cst.Call, keyword: str) -> bool:
    """Does ``call`` pass ``keyword=`` (or ``**kwargs``, which may carry it)?"""
    return any(
        arg.star == "**" or (arg.keyword is not None and arg.keyword.value == keyword) for arg in call.args
    )


def data_argument(call: cst.Call) -> Optional[cst.BaseExpression]:
    """The ``data`` of ``torch.tensor(data, ...)`` / ``torch.as_tensor(data, ...)``."""
    for arg in call.args:
        if arg.keyword is None and not arg.star:
            return arg.value
        if arg.keyword is not None and arg.keyword.value == "data":
            return arg.value
    return None


_NAMED_CONSTANTS = frozenset("math.pi math.e math.inf math.tau np.pi np.e np.inf numpy.pi numpy.e numpy.inf".split())


def constant_data(node: cst.BaseExpression) -> bool:
    """A list or tuple literal made only of numbers (nested lists/tuples allowed), or a choice
    between two such literals (``[0, 0, 1] if n == 2 else [0, 0, 0, 1]``)."""
    if isinstance(node, cst.IfExp):
        return constant_data(node.body) and constant_data(node.orelse)
    if not isinstance(node, (cst.List, cst.Tuple)) or not node.elements:
        return False
    return all(
        not isinstance(element, cst.StarredElement)
        and (constant_data(element.value) or number_literal(element.value))
        for element in node.elements
    )


def number_literal(node: cst.BaseExpression) -> bool:
    """A number written in the code: ``0.5``, ``-1``, ``2 * np.pi``, ``1 / 255``."""
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary)):
        return True
    if isinstance(node, cst.Attribute):
        return dotted_name(node) in _NAMED_CONSTANTS
    if isinstance(node, cst.Name):
        return node.value in ("True", "False")
    if isinstance(node, cst.UnaryOperation):
        return isinstance(node.operator, (cst.Minus, cst.Plus)) and number_literal(node.expression)
    if isinstance(node, cst.BinaryOperation):
        return number_literal(node.left) and number_literal(node.right)
    return False
