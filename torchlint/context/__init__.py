"""Facts about one file that every rule shares, gathered during the single traversal.

``FileContext`` is the first listener of the walk: it enters and leaves scopes, records
imports and assignments, and notices training loops, before any rule sees a node.
Rules ask it questions (``qualname``, ``tensor_kind``, ``value_of``, ``scope``) instead of
re-deriving the answers.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, List, Optional, Tuple

import libcst as cst

from torchlint.context.dataflow import Assignments, self_attributes, uses_cuda
from torchlint.context.datasets import DatasetFacts, is_test_module
from torchlint.context.imports import ImportTable, dotted_name
from torchlint.context.scopes import Scope, function_hot_reason, is_training_step_call, settle_helpers
from torchlint.context.tensors import HOST, NOT, TENSOR, TensorInference, parameter_kind

__all__ = ["FileContext", "Scope", "TENSOR", "HOST", "NOT", "dotted_name"]


class FileContext:
    def __init__(self, module: cst.Module, hot_functions: FrozenSet[str] = frozenset(), path: str = "") -> None:
        self.module = module
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
        self._inference = TensorInference(self.qualname, self._name_kind)

    # ---- questions rules ask -------------------------------------------------------
    def qualname(self, node: cst.BaseExpression) -> Optional[str]:
        return self.imports.qualname(node)

    def tensor_kind(self, node: cst.BaseExpression) -> Optional[str]:
        return self._inference.kind(node)

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
            self._uses_cuda = uses_cuda(self.module.code)
        return self._uses_cuda

    @property
    def is_test_module(self) -> bool:
        """The file holds tests: by its path, its imports (pytest/unittest) or ``test_*`` functions."""
        if self._test_module is None:
            self._test_module = is_test_module(self.module, self.imports, self.path)
        return self._test_module

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
        scope.hot_reason = function_hot_reason(name, class_name, self._hot_functions)
        if owner.kind in ("module", "class"):
            owner.methods[name] = scope
        self._functions.append(scope)
        self._kinds[scope] = kinds = {}
        self._values[scope] = Assignments()
        if scope.hot_reason:
            params = node.params
            for param in (*params.posonly_params, *params.params, *params.kwonly_params):
                if param.name.value not in ("self", "cls"):
                    kinds[param.name.value] = parameter_kind(param, self.qualname)
        self._push(scope)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._pop()

    def visit_For(self, node: cst.For) -> None:
        self._bind_target(node.target, TENSOR if self.tensor_kind(node.iter) in (TENSOR, HOST) else None)
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
            loop.hot_reason = "training loop"
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

    def _bind_target(
        self, target: cst.BaseExpression, kind: Optional[str], value: Optional[cst.BaseExpression] = None
    ) -> None:
        function = self.scope.function
        if isinstance(target, cst.Name):
            self._kinds[function][target.value] = kind
            order = self._next_order()
            if value is not None:
                self._order[id(value)] = order
            self._values[function].bind(target.value, value, order)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind_target(element.value, None)
        elif isinstance(target, cst.StarredElement):
            self._bind_target(target.value, NOT)
