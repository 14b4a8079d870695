"""What a file says about its datasets and about itself as test code.

Data-loading rules stay silent where workers cannot help: a dataset that only indexes
tensors already in memory, a ``range``/list, an ``IterableDataset`` (which every worker
would replay unless it shards itself), and test modules whose loaders exist to exercise
code rather than to train.
"""

from __future__ import annotations

import re
from typing import Dict, Optional

import libcst as cst

from torchlint.context.imports import dotted_name

_IN_MEMORY_CALLS = frozenset({"builtins.range", "builtins.list", "builtins.tuple", "builtins.zip"})
_TEST_IMPORTS = ("pytest", "unittest")
_SUBSET = "torch.utils.data.Subset"
_MAX_STEPS = 8
_TEST_PATH = re.compile(r"(^|[\\/])(tests?|testing|test_utils)[\\/]|(^|[\\/])(test_\w*|\w*_test|conftest)\.py$")


def module_classes(module: cst.Module) -> Dict[str, cst.ClassDef]:
    return {node.name.value: node for node in module.body if isinstance(node, cst.ClassDef)}


def is_test_module(module: cst.Module, imports, path: str = "") -> bool:
    """Test code: under a tests/test_utils folder, named test_*.py, importing pytest/unittest,
    or defining top-level ``test_*`` functions."""
    if _TEST_PATH.search(path) or any(imports.imports(name) for name in _TEST_IMPORTS):
        return True
    return any(
        isinstance(node, cst.FunctionDef) and node.name.value.startswith("test_") for node in module.body
    )


def _method(cls: cst.ClassDef, name: str) -> Optional[cst.FunctionDef]:
    for statement in cls.body.body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value == name:
            return statement
    return None


def _has_call(root: cst.CSTNode) -> bool:
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call):
            return True
        stack.extend(node.children)
    return False


class DatasetFacts:
    """Answers about the dataset argument of a ``DataLoader`` call in one file."""

    def __init__(self, ctx) -> None:
        self._ctx = ctx
        self._classes: Optional[Dict[str, cst.ClassDef]] = None

    def _class_of(self, call: cst.Call) -> Optional[cst.ClassDef]:
        if self._classes is None:
            self._classes = module_classes(self._ctx.module)
        name = dotted_name(call.func)
        return self._classes.get(name) if name else None

    def needs_no_workers(self, dataset: Optional[cst.BaseExpression]) -> bool:
        """In memory already (workers only add overhead) or iterable (workers would replay it)."""
        dataset = self._resolve(dataset)
        if isinstance(dataset, (cst.List, cst.Tuple, cst.ListComp)):
            return True
        if not isinstance(dataset, cst.Call):
            return False
        qualname = self._ctx.qualname(dataset.func) or ""
        if qualname in _IN_MEMORY_CALLS or qualname.endswith("TensorDataset"):
            return True
        cls = self._class_of(dataset)
        return cls is not None and (self._iterable(cls) or self._indexes_memory(cls))

    def _resolve(self, dataset: Optional[cst.BaseExpression]) -> Optional[cst.BaseExpression]:
        """Follow names, ``self.<attr>`` and ``Subset(ds, ...)`` to the expression that built it."""
        for _ in range(_MAX_STEPS):
            if isinstance(dataset, cst.Name):
                value = self._ctx.value_of(dataset.value)
            elif isinstance(dataset, cst.Attribute) and dotted_name(dataset.value) == "self":
                value = self._ctx.attribute_value(dataset.attr.value)
            elif isinstance(dataset, cst.Call) and self._ctx.qualname(dataset.func) == _SUBSET and dataset.args:
                value = dataset.args[0].value
            else:
                return dataset
            if value is None:
                return dataset
            dataset = value
        return dataset

    def _iterable(self, cls: cst.ClassDef) -> bool:
        return any((dotted_name(base.value) or "").endswith("IterableDataset") for base in cls.bases)

    def _indexes_memory(self, cls: cst.ClassDef) -> bool:
        """``__getitem__`` calls nothing: it only indexes what ``__init__`` stored."""
        getitem = _method(cls, "__getitem__")
        return getitem is not None and not _has_call(getitem.body)
