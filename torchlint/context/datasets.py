"""What a file says about its datasets and about itself as test code.

Data-loading rules stay silent where workers cannot help: a dataset that only indexes
tensors already in memory, a ``range``/list, an ``IterableDataset`` (which every worker
would replay unless it shards itself), and test modules whose loaders exist to exercise
code rather than to train.
"""

from __future__ import annotations

import re
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional

import libcst as cst

from torchlint.context.dataflow import MAX_TRAIL
from torchlint.context.devices import device_move, names_cpu
from torchlint.context.scopes import method_def
from torchlint.syntax import dotted_name
from torchlint.walker import descendants, returned_values, simple_statements

_IN_MEMORY_CALLS = frozenset({"builtins.range", "builtins.list", "builtins.tuple", "builtins.zip"})
_IN_MEMORY_LIBRARIES = ("torch_geometric.datasets.",)  # PyG's InMemoryDataset family: TUDataset, Planetoid, QM9
# Calls that only convert what ``__getitem__`` indexed: no file read, decode or augmentation.
# What a `__getitem__` that only indexes memory may call: conversions, and the tests and sizes
# around them (`torch.is_tensor(idx)`, `len(self.x)`).
_CONVERTING_FUNCTIONS = frozenset(
    "torch.from_numpy torch.tensor torch.as_tensor numpy.array numpy.asarray builtins.int builtins.float "
    "builtins.len builtins.isinstance torch.is_tensor".split()
)
_CONVERTING_METHODS = frozenset("float long int double toarray todense astype squeeze tolist".split())
NO_WORKERS = "no workers"  # what a file offers for its dataset classes that workers cannot help
_SUBSETS = frozenset({"torch.utils.data.Subset", "torch.utils.data.random_split"})  # parts of their first argument
_SET_UP = frozenset({"__init__", "setup", "prepare_data"})  # run before any epoch
_TEST_FOLDER = re.compile(r"(^|[\\/])(tests?|unittests?|testing|test_utils)[\\/]|(^|[\\/])conftest\.py$")
_TEST_FILE = re.compile(r"(^|[\\/])(test_\w*|\w*_test)\.py$")


def module_classes(module: cst.Module) -> Dict[str, cst.ClassDef]:
    return {node.name.value: node for node in module.body if isinstance(node, cst.ClassDef)}


def is_test_module(module: cst.Module, imports, path: str = "") -> bool:
    """Test code: under a tests/unittests/test_utils folder, a conftest, a module defining a
    ``unittest.TestCase``, or one defining what pytest collects (top-level ``test_*`` functions,
    ``Test*`` classes without ``__init__``) that is named ``test_*.py``/``*_test.py`` or imports
    pytest. A name alone does not make test code (``test_time_augmentation.py`` holding a
    ``TestTimeAugmentation`` transform), nor does one ``def test_epoch(...)`` or ``import unittest``."""
    if _TEST_FOLDER.search(path):
        return True
    tests = False
    for node in module.body:
        if isinstance(node, cst.ClassDef):
            if any((dotted_name(base.value) or "").endswith("TestCase") for base in node.bases):
                return True
            tests = tests or (node.name.value.startswith("Test") and method_def(node, "__init__") is None)
        elif isinstance(node, cst.FunctionDef):
            tests = tests or node.name.value.startswith("test_")
    return tests and (bool(_TEST_FILE.search(path)) or imports.imports("pytest"))


def _changes(root: cst.CSTNode, owners: FrozenSet[str]) -> bool:
    """Does ``root`` call a method of, or assign an attribute of, one of ``owners`` (dotted names)?"""
    for node in descendants(root):
        changed = None
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            changed = node.func.value
        elif isinstance(node, (cst.AssignTarget, cst.AugAssign)) and isinstance(node.target, cst.Attribute):
            changed = node.target.value
        if changed is not None and dotted_name(changed) in owners:
            return True
    return False


def _returned(function: cst.FunctionDef) -> List[cst.BaseExpression]:
    """What ``function`` returns, a returned name followed to every value the function assigns it."""
    assigned: Dict[str, List[cst.BaseExpression]] = {}
    for line in simple_statements(function.body):
        for small in line.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                assigned.setdefault(small.targets[0].target.value, []).append(small.value)
    found: List[cst.BaseExpression] = []
    for value in returned_values(function):
        found.extend(assigned.get(value.value, [value]) if isinstance(value, cst.Name) else [value])
    return found


def _loops(root: cst.CSTNode) -> Iterable[cst.CSTNode]:
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.For, cst.While)):
            yield node
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node is not root:
            continue
        stack.extend(node.children)


class DatasetFacts:
    """Answers about the dataset argument of a ``DataLoader`` call in one file."""

    def __init__(self, ctx) -> None:
        self._ctx = ctx
        self._classes: Optional[Dict[str, cst.ClassDef]] = None

    def classes(self) -> Dict[str, cst.ClassDef]:
        """The classes the module defines at its top level, by name."""
        if self._classes is None:
            self._classes = module_classes(self._ctx.module)
        return self._classes

    def _class_of(self, call: cst.Call) -> Optional[cst.ClassDef]:
        name = dotted_name(call.func)
        return self.classes().get(name) if name else None

    def needs_no_workers(self, dataset: Optional[cst.BaseExpression]) -> bool:
        """In memory already (workers only add overhead) or iterable (workers would replay it)."""
        return self._needs_no_workers(self._resolve(dataset), self._ctx.qualname, 0)

    def _needs_no_workers(self, dataset: Optional[cst.BaseExpression], qualname: Callable, depth: int) -> bool:
        if isinstance(dataset, (cst.List, cst.Tuple, cst.ListComp)):
            return True
        if depth == 0 and isinstance(dataset, cst.Name) and self._ctx.used_as_tensor(dataset.value):
            return True  # DataLoader(x, batch_size=n) of a tensor: batches are slices of it
        if not isinstance(dataset, cst.Call):
            return False
        name = qualname(dataset.func) or ""
        if name in _IN_MEMORY_CALLS or name.endswith("TensorDataset") or name.startswith(_IN_MEMORY_LIBRARIES):
            return True
        if depth == 0 and any(self._on_device(arg.value) for arg in dataset.args):
            return True  # `to_dataset(x.to(device))`: batches of device tensors, nothing to load
        function = self._ctx.function_here(dataset.func)
        if function is not None and depth < 2:  # built by a function of the file: what it returns
            returned = _returned(function)
            return bool(returned) and all(
                self._needs_no_workers(value, self._ctx.qualname_ahead, depth + 1) for value in returned
            )
        cls = self._class_of(dataset)
        if cls is not None:
            return self._iterable(cls) or self._indexes_memory(cls)
        key = self._ctx.project_callee(dataset.func)  # a dataset class of another module
        return key is not None and self._ctx.need(f"{key}@dataset") == NO_WORKERS

    def _on_device(self, value: cst.BaseExpression) -> bool:
        """A tensor moved to a device (``x.to(self.device)``, ``x.cuda()``), also through a name."""
        if isinstance(value, cst.Name):
            value = self._ctx.value_of(value.value)
        move = device_move(self._ctx, value) if isinstance(value, cst.Call) else None
        return move is not None and not (move.device is not None and names_cpu(self._ctx, move.device))

    def offers(self) -> Dict[str, str]:
        """This module's dataset classes that workers cannot help, by the key other files ask for."""
        return {
            f"{self._ctx.module_name}.{name}@dataset": NO_WORKERS
            for name, cls in self.classes().items() if self._iterable(cls) or self._indexes_memory(cls)
        }

    def changed_between_epochs(self, dataset: Optional[cst.BaseExpression], loader: Optional[str]) -> bool:
        """Does code that runs between epochs change the dataset (``ds.set_epoch(epoch)``,
        ``ds.difficulty = d``, ``loader.dataset.resample()``)? Persistent workers would miss it.
        Looked for in the loops of the current function that come after the loader is built,
        and for ``self.<name>`` in the methods of its class that run after set-up."""
        owners = {name for name in (dotted_name(dataset) if dataset is not None else None,) if name}
        if loader:
            owners.add(f"{loader}.dataset")
        if not owners:
            return False
        owners = frozenset(owners)
        function = self._ctx.scope.function
        if function.node is not None and any(
            _changes(loop.body, owners) for loop in _loops(function.node) if not self._ctx.entered(loop)
        ):  # loops already walked ran before the loader was built: they prepare the dataset
            return True
        cls = function.enclosing_class
        if cls is None or not any(owner.startswith("self.") for owner in owners):
            return False
        return any(
            _changes(statement, owners)
            for statement in cls.node.body.body
            if isinstance(statement, cst.FunctionDef) and statement.name.value not in _SET_UP
        )

    def _resolve(self, dataset: Optional[cst.BaseExpression]) -> Optional[cst.BaseExpression]:
        """Follow names, ``self.<attr>``, ``Subset(ds, ...)`` and ``train, val = random_split(ds, ...)``
        to the expression that built it."""
        for _ in range(MAX_TRAIL):
            if isinstance(dataset, cst.Name):
                value = self._ctx.value_of(dataset.value) or self._split_from(dataset.value)
            elif isinstance(dataset, cst.Attribute) and dotted_name(dataset.value) == "self":
                value = self._ctx.attribute_value(dataset.attr.value)
            elif isinstance(dataset, cst.Call) and self._ctx.qualname(dataset.func) in _SUBSETS and dataset.args:
                value = dataset.args[0].value
            else:
                return dataset
            if value is None:
                return dataset
            dataset = value
        return dataset

    def _split_from(self, name: str) -> Optional[cst.Call]:
        """The ``random_split(ds, ...)`` that ``name`` was unpacked from, if so."""
        source = self._ctx.unpacked_from(name)
        return source if isinstance(source, cst.Call) and self._ctx.qualname(source.func) in _SUBSETS else None

    def _iterable(self, cls: cst.ClassDef) -> bool:
        return any((dotted_name(base.value) or "").endswith("IterableDataset") for base in cls.bases)

    def _indexes_memory(self, cls: cst.ClassDef) -> bool:
        """``__getitem__`` only indexes what ``__init__`` stored, at most converting it
        (``torch.from_numpy(self.x[i]).float()``)."""
        getitem = method_def(cls, "__getitem__")
        return getitem is not None and all(
            self._converts(node) for node in descendants(getitem.body) if isinstance(node, cst.Call)
        )

    def _converts(self, call: cst.Call) -> bool:
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in _CONVERTING_METHODS:
            return True
        return self._ctx.qualname(call.func) in _CONVERTING_FUNCTIONS
