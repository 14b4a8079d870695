"""Facts about one file that every rule shares, gathered during the single traversal.

``FileContext`` is the first listener of the walk: it enters and leaves scopes, records
imports and assignments, and notices training loops, before any rule sees a node.
Rules ask it questions (``qualname``, ``tensor_kind``, ``value_of``, ``scope``) instead of
re-deriving the answers.
"""

from __future__ import annotations

from typing import Callable, Dict, FrozenSet, List, Optional, Tuple

import libcst as cst

from torchlint.context.dataflow import Assignments, self_attributes, uses_cuda
from torchlint.context.datasets import DatasetFacts, is_test_module
from torchlint.context.imports import ImportTable
from torchlint.context.scopes import MODEL, STEP, Scope, function_hotness, is_training_step_call, settle_helpers
from torchlint.context.tensors import (
    HOST, NOT, TENSOR, TENSOR_METHODS, TENSOR_ONLY_MEMBERS, TensorInference, dimension_source, parameter_kind, shape_source,
)
from torchlint.syntax import dotted_name, is_name
from torchlint.walker import descendants

__all__ = ["FileContext", "Scope", "TENSOR", "HOST", "NOT", "MODEL", "STEP"]


class FileContext:
    def __init__(
        self, module: cst.Module, text: str, hot_functions: FrozenSet[str] = frozenset(), path: str = ""
    ) -> None:
        self.module = module
        self.text = text  # the source ``module`` was parsed from
        self.path = path
        self.imports = ImportTable()
        self.ancestors: List[cst.CSTNode] = []
        self.module_scope = Scope("module", "<module>", None, module)
        self.scope = self.module_scope
        self._hot_functions = hot_functions
        self._functions: List[Scope] = []
        # Per function scope: local name -> tensor kind, and the history of assigned values.
        self._kinds: Dict[Scope, Dict[str, Optional[str]]] = {self.module_scope: {}}
        self._values: Dict[Scope, Assignments] = {self.module_scope: Assignments()}
        self._order: Dict[int, int] = {}  # id(assigned expression) -> its assignment number
        self._assignments = 0
        self._uses_cuda: Optional[bool] = None
        self._test_module: Optional[bool] = None
        self.datasets = DatasetFacts(self)
        self._class_attributes: Dict[Scope, Dict[str, Optional[cst.BaseExpression]]] = {}
        # Per function scope: names unpacked from a tensor's shape (`b, c = x.shape`) -> the tensor.
        self._dims: Dict[Scope, Dict[str, cst.BaseExpression]] = {self.module_scope: {}}
        self._evidence: Dict[tuple, bool] = {}
        self._inference = TensorInference(self.qualname, self._name_kind)

    # ---- questions rules ask -------------------------------------------------------
    def qualname(self, node: cst.BaseExpression) -> Optional[str]:
        return self.imports.qualname(node)

    def tensor_kind(self, node: cst.BaseExpression) -> Optional[str]:
        return self._inference.kind(node)

    def bound(self, name: str) -> bool:
        """Has ``name`` been bound so far in the current function (a parameter or assignment)?"""
        return name in self._kinds[self.scope.function]

    def value_of(
        self, name: str, before: Optional[cst.BaseExpression] = None
    ) -> Optional[cst.BaseExpression]:
        """The expression last assigned to ``name`` in the current function, if simple.

        With ``before`` (an assigned expression that mentions ``name``), the value ``name``
        held when that assignment ran: ``img = img.transpose(2, 0, 1)`` looks back past itself.
        """
        order = self._order.get(id(before)) if before is not None else None
        if before is not None and order is None:
            return None
        return self._values[self.scope.function].latest(name, order)

    def attribute_value(self, name: str) -> Optional[cst.BaseExpression]:
        """The one expression assigned to ``self.<name>`` in the enclosing class, if unique."""
        cls = self.scope.enclosing_class if self.scope.kind != "class" else self.scope
        if cls is None or not isinstance(cls.node, cst.ClassDef):
            return None
        attributes = self._class_attributes.get(cls)
        if attributes is None:
            attributes = self._class_attributes[cls] = self_attributes(cls.node)
        return attributes.get(name)

    @property
    def uses_cuda(self) -> bool:
        """The file moves data to, or queries, a CUDA device somewhere."""
        if self._uses_cuda is None:
            self._uses_cuda = uses_cuda(self.text)
        return self._uses_cuda

    @property
    def is_test_module(self) -> bool:
        """The file holds tests: by its path, its imports (pytest/unittest) or ``test_*`` functions."""
        if self._test_module is None:
            self._test_module = is_test_module(self.module, self.imports, self.path)
        return self._test_module

    def in_error_path(self) -> bool:
        """Inside a ``raise`` or an ``assert``: code that does not run in normal training
        (an assert's check is also stripped by ``python -O``)."""
        return self.inside(cst.Raise, cst.Assert)

    def sized_tensor(self, node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        """The tensor whose dimension ``node`` holds (``x.shape[0]``, ``x.size(1)``, ``len(x)``,
        or a name assigned or unpacked from those), else None."""
        if isinstance(node, cst.Name):
            dims = self._dims[self.scope.function]
            if node.value in dims:
                return dims[node.value]
            value = self.value_of(node.value)
            return dimension_source(value, self.tensor_kind) if value is not None else None
        return dimension_source(node, self.tensor_kind)

    def in_definition(self) -> bool:
        """In a parameter default or a decorator: evaluated once, when the function is defined."""
        return self.inside(cst.Param, cst.Decorator)

    def uses_member(self, name: str, members: FrozenSet[str]) -> bool:
        """Does the current function use ``name.<member>`` for one of ``members``?"""
        return self._function_fact((name, members), lambda body: _uses_member(body, name, members))

    def surely_tensor(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        """A ``TENSOR`` with more evidence than a parameter's name: a name used like a tensor
        (``x.shape``) or assigned from such a value, a torch function's result, a tensor-only
        method's result (``m.any()``), or an expression over one of those."""
        if depth > 4 or self.tensor_kind(node) != TENSOR:
            return False
        depth += 1
        if isinstance(node, cst.Name):
            if self.used_as_tensor(node.value):
                return True
            value = self.value_of(node.value)
            return value is not None and value is not node and self.surely_tensor(value, depth)
        if isinstance(node, cst.Comparison):
            operands = [node.left, *(target.comparator for target in node.comparisons)]
            return any(self.surely_tensor(operand, depth) for operand in operands)
        if isinstance(node, cst.BinaryOperation):
            return self.surely_tensor(node.left, depth) or self.surely_tensor(node.right, depth)
        if isinstance(node, cst.UnaryOperation):
            return self.surely_tensor(node.expression, depth)
        if isinstance(node, (cst.Subscript, cst.Attribute)):
            return self.surely_tensor(node.value, depth)
        if isinstance(node, cst.Call):
            if (self.qualname(node.func) or "").startswith("torch."):
                return True
            if isinstance(node.func, cst.Attribute):
                owner = node.func.value
                if isinstance(owner, cst.Name) and owner.value == "self":
                    return False  # self.helper(x) may well return a bool or a number
                return node.func.attr.value in TENSOR_METHODS or self.surely_tensor(owner, depth)
        return False

    def in_comprehension(self) -> bool:
        return self.inside(cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)

    def written_into(self, name: str) -> bool:
        """Is ``name`` filled in place in the current function (``name[i] = v``,
        ``name[i] += v``, ``name.fill_(v)``)?"""
        return self._function_fact((name, "written"), lambda body: _writes_into(body, name))

    def used_as_tensor(self, name: str) -> bool:
        """Is ``name`` used with a member only tensors have (``x.shape``, ``x.view(...)``) in
        the current function, and not type-tested (``isinstance(x, ...)``: code that takes
        tensors or collections)? Tells a tensor from a list of tensors."""
        type_tested = self._function_fact((name, "isinstance"), lambda body: _type_tested(body, name))
        return not type_tested and self.uses_member(name, TENSOR_ONLY_MEMBERS)

    @property
    def parent(self) -> Optional[cst.CSTNode]:
        """The parent of the node being visited (valid inside ``visit_*``)."""
        return self.ancestors[-1] if self.ancestors else None

    def indentation(self) -> Tuple[str, ...]:
        """The indentation of the block the visited node sits in, one token per level."""
        default = self.module.default_indent
        return tuple(
            node.indent if node.indent is not None else default
            for node in self.ancestors
            if isinstance(node, cst.IndentedBlock)
        )

    def inside(self, *types: type) -> bool:
        return any(isinstance(node, types) for node in self.ancestors)

    def settle(self) -> None:
        """Resolve hotness that depends on the whole file (helpers of hot functions)."""
        settle_helpers(self.module_scope, self._functions)

    def _function_fact(self, question: tuple, answer: Callable[[cst.CSTNode], bool]) -> bool:
        """``answer`` about the current function's whole definition, computed once per function."""
        function = self.scope.function
        key = (id(function), *question)
        if key not in self._evidence:
            self._evidence[key] = function.node is not None and answer(function.node)
        return self._evidence[key]

    # ---- the traversal ---------------------------------------------------------------
    def _name_kind(self, name: str) -> Optional[str]:
        return self._kinds[self.scope.function].get(name)

    def _next_order(self) -> int:
        self._assignments += 1
        return self._assignments

    def _push(self, scope: Scope) -> None:
        self.scope = scope

    def _pop(self) -> None:
        assert self.scope.parent is not None
        self.scope = self.scope.parent

    def visit_Import(self, node: cst.Import) -> None:
        self.imports.add(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.imports.add(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        scope = Scope("class", node.name.value, self.scope, node)
        if self.scope.kind in ("module", "class"):
            self.scope.methods[node.name.value] = scope
        self._push(scope)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        name = node.name.value
        owner = self.scope
        class_name = owner.name if owner.kind == "class" else None
        scope = Scope("function", name, owner, node)
        scope.hot_reason, scope.hot_kind = function_hotness(name, class_name, self._hot_functions)
        if owner.kind in ("module", "class"):
            owner.methods[name] = scope
        self._functions.append(scope)
        self._kinds[scope] = kinds = {}
        self._values[scope] = Assignments()
        self._dims[scope] = {}
        # Annotations count everywhere (a helper may turn out hot); forward and loss inputs
        # are assumed to be tensors unless they say otherwise.
        assume_tensor = scope.hot_kind == MODEL
        params = node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            if param.name.value not in ("self", "cls"):
                kinds[param.name.value] = parameter_kind(param, self.qualname, assume_tensor)
        self._push(scope)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._pop()

    def visit_For(self, node: cst.For) -> None:
        if not (isinstance(node.target, cst.Tuple) and self._bind_zipped(node.target, node.iter)):
            self._bind_target(node.target, self._element_kind(node.iter))
        self._push(Scope("loop", "for", self.scope, node))

    def leave_For(self, node: cst.For) -> None:
        self._pop()

    def visit_While(self, node: cst.While) -> None:
        self._push(Scope("loop", "while", self.scope, node))

    def leave_While(self, node: cst.While) -> None:
        self._pop()

    def visit_Call(self, node: cst.Call) -> None:
        loop = self.scope
        if loop.kind == "loop" and loop.hot_reason is None and is_training_step_call(node.func):
            loop.hot_reason, loop.hot_kind = "training loop", STEP
        func = node.func
        if isinstance(func, cst.Name) or (
            isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
        ):
            self.scope.function.called.add(dotted_name(func) or "")

    def leave_Assign(self, node: cst.Assign) -> None:
        kind = self.tensor_kind(node.value)
        for target in node.targets:
            self._bind_target(target.target, kind, node.value)

    def leave_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind_target(node.target, self.tensor_kind(node.value), node.value)

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            kinds = self._kinds[self.scope.function]
            name = node.target.value
            kinds[name] = kinds.get(name) if kinds.get(name) in (TENSOR, HOST) else None
            self._values[self.scope.function].bind(name, None, self._next_order())

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind_target(node.asname.name, None)

    def _bind_zipped(self, target: cst.Tuple, iterable: cst.BaseExpression) -> bool:
        """``for a, b in zip(x, y)`` / ``for i, row in enumerate(x)``: elements of each side."""
        if not isinstance(iterable, cst.Call) or any(arg.keyword or arg.star for arg in iterable.args):
            return False
        name = self.qualname(iterable.func)
        sources = [arg.value for arg in iterable.args]
        if name == "builtins.enumerate" and len(sources) == 1:
            kinds = [NOT, self._element_kind(sources[0])]
        elif name == "builtins.zip":
            kinds = [self._element_kind(source) for source in sources]
        else:
            return False
        if len(kinds) != len(target.elements):
            return False
        for element, kind in zip(target.elements, kinds):
            self._bind_target(element.value, kind)
        return True

    def _element_kind(self, iterable: cst.BaseExpression) -> Optional[str]:
        """What iterating ``iterable`` yields: a tensor's (or a host tensor's) rows are tensors."""
        return TENSOR if self.tensor_kind(iterable) in (TENSOR, HOST) else None

    def _bind_target(
        self, target: cst.BaseExpression, kind: Optional[str], value: Optional[cst.BaseExpression] = None
    ) -> None:
        function = self.scope.function
        if isinstance(target, cst.Name):
            self._kinds[function][target.value] = kind
            self._dims[function].pop(target.value, None)
            order = self._next_order()
            if value is not None:
                self._order[id(value)] = order
            self._values[function].bind(target.value, value, order)
        elif isinstance(target, (cst.Tuple, cst.List)):
            shaped = shape_source(value, self.tensor_kind) if value is not None else None
            for element in target.elements:
                self._bind_target(element.value, NOT if shaped is not None else None)
                if shaped is not None and isinstance(element.value, cst.Name):
                    self._dims[function][element.value.value] = shaped
        elif isinstance(target, cst.StarredElement):
            self._bind_target(target.value, NOT)


def _uses_member(root: cst.CSTNode, name: str, members: FrozenSet[str]) -> bool:
    return any(
        isinstance(node, cst.Attribute)
        and node.attr.value in members
        and is_name(node.value, name)
        for node in descendants(root)
    )


def _writes_into(root: cst.CSTNode, name: str) -> bool:
    for node in descendants(root):
        target = node.target if isinstance(node, (cst.AssignTarget, cst.AugAssign)) else None
        if isinstance(target, cst.Subscript) and is_name(target.value, name):
            return True
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and is_name(node.func.value, name)
            and node.func.attr.value.endswith("_")
            and not node.func.attr.value.startswith("_")
        ):
            return True
    return False


def _type_tested(root: cst.CSTNode, name: str) -> bool:
    return any(
        isinstance(node, cst.Call)
        and is_name(node.func, "isinstance")
        and node.args
        and is_name(node.args[0].value, name)
        for node in descendants(root)
    )
