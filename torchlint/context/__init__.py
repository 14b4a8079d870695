"""Facts about one file that every rule shares, gathered during the single traversal.

``FileContext`` is the first listener of the walk: it enters and leaves scopes, records
imports and assignments, and notices training loops, before any rule sees a node.
Rules ask it questions (``qualname``, ``tensor_kind``, ``value_of``, ``scope``) instead of
re-deriving the answers. Names resolve through enclosing functions to the module, and
``self.<attribute>`` through what the class assigns to it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from torchlint.context.calls import CallSites, arguments_by_parameter, is_parameter, parameter_at
from torchlint.context.dataflow import Bindings, assigned_before, self_attributes, uses_cuda
from torchlint.context.datasets import DatasetFacts, is_test_module
from torchlint.context.devices import host_arguments
from torchlint.context.facts import (
    TORCH_ONLY_CALL, FunctionFacts, TextFacts, assertion_call, attribute_kinds, empty_input_branch,
    evaluates_dataset, evaluation_only_branch, export_only_branch, guards_right, host_consumed, iterates_dataset,
    occasional_branch, off_gpu_branch, once_only_branch, reaching_code, runs_once_after_guard, steps_optimizer, takes_step,
    warning_branch, warning_call,
)
from torchlint.context.imports import ImportTable, module_name, reexports
from torchlint.context.loaders import LoaderSources, loader_classes
from torchlint.context.scopes import (
    BATCH_HOOKS, MODEL, STEP, Scope, based_on, callee, function_hotness, is_training_step_call, loss_class, loss_code,
    method_def, settle_helpers,
)
from torchlint.context.tensors import (
    ARRAY_MEMBERS, BATCH, DEVICE_METHODS, HOST, MODULE, NOT, TENSOR, TENSOR_METHODS, TORCH_ONLY_MEMBERS, TensorInference,
    dimension_index, dimension_source, host_library, maps_to_tensors, one_line_return, parameter_kind, passed_through,
    shape_source,
)
from torchlint.project import Elsewhere, ProjectFacts
from torchlint.syntax import COMPREHENSIONS, comparison_operands, dotted_name, is_name, method_call, target_names
from torchlint.walker import descendants

if TYPE_CHECKING:
    from torchlint.rules.base import Finding

_UNKNOWN = object()  # `_order_of` for an expression no assignment holds

__all__ = ["FileContext", "Scope", "TENSOR", "HOST", "NOT", "BATCH", "MODEL", "STEP"]

_TERMINATORS = (cst.Return, cst.Raise, cst.Continue, cst.Break)
_CALLED_IN_LOOP = "@called_in_loop"  # the key a module tells which functions of another it calls from a loop by
# The key a module tells its one-line tests of tensors by (`return labels >= 0`), and the value
# for those whose result shows a tensor by itself (`return mask.any()`).
_PASSES_TENSORS, _SHOWN = "@passes_tensors", "shown"
# Calls that are never to a function of the project being linted.
_TEST_CASE_PREFIXES = ("test", "setup")
_NOT_PROJECT = ("builtins.", "torch.", "numpy.", "typing.", "math.", "os.", "logging.")
# Methods whose result shows a tensor: a tensor's own, and a move of a tensor-kind value
# (`y.cuda()`: a module's would not be tensor-kind).
_SHOWING_TENSOR_METHODS = TENSOR_METHODS | DEVICE_METHODS


# In-place methods that write values into a tensor at indices.
_FILLS = frozenset("scatter_ scatter_add_ scatter_reduce_ index_add_ index_copy_ index_fill_ index_put_".split())


class FileContext:
    def __init__(
        self, module: cst.Module, text: str, hot_functions: FrozenSet[str] = frozenset(), path: str = "",
        elsewhere: Optional[Elsewhere] = None,
    ) -> None:
        """``elsewhere``: what the other files of the run tell this one (``torchlint.project``)."""
        self.module = module
        self.text = text  # the source ``module`` was parsed from
        self.path = path
        self.module_name = module_name(path)
        package = self.module_name if path.endswith("__init__.py") else self.module_name.rpartition(".")[0]
        self.imports = ImportTable(package)
        self.ancestors: List[cst.CSTNode] = []
        self.module_scope = Scope("module", "<module>", None, module)
        self.scope = self.module_scope
        self._hot_functions = hot_functions
        self._plots = "matplotlib" in text  # functions may draw: see ``visit_Call``
        self.elsewhere = elsewhere or Elsewhere()
        self._offers: Dict[str, str] = {}
        self._needs: Dict[str, None] = {}  # the keys asked for, once each, in order
        self._scopes: List[Scope] = []  # every function and loop, for settling hot paths
        self._backpropagated: Set[str] = set()  # functions (`nll`) and methods (`.nll`) whose result `.backward()` takes
        self._bindings: Dict[Scope, Bindings] = {self.module_scope: Bindings()}
        self._current = self._bindings[self.module_scope]
        self._order: Dict[int, int] = {}  # id(assigned expression) -> its assignment number
        self._assignments = 0
        self._uses_cuda: Optional[bool] = None
        self._host_consumed: Dict[Tuple[Scope, bool], Set[str]] = {}  # see ``needed_on_host``
        self._test_module: Optional[bool] = None
        self.datasets = DatasetFacts(self)
        self._class_attributes: Dict[Scope, Dict[str, Optional[cst.BaseExpression]]] = {}
        self._module_functions: Optional[Dict[str, cst.FunctionDef]] = None  # by name, for function_here
        self._attribute_kinds: Dict[Scope, Dict[str, Optional[str]]] = {}
        self._facts: Dict[Scope, FunctionFacts] = {}
        # (id of a bound value, the name) -> the facts of the code that binding reaches
        self._reached: Dict[Tuple[int, str], FunctionFacts] = {}
        self._mappings: Dict[Scope, FrozenSet[str]] = {}  # parameters annotated `Dict[str, Tensor]`
        self._terminating: Set[int] = set()
        self._entered_loops: Set[int] = set()  # ids of `if` statements every branch of which terminates
        # Kinds as bound (cheap, used while walking), and kinds with evidence from the whole
        # function for names bound to something unknown (asked by rules, on demand).
        self._bound_kinds = TensorInference(self.qualname, self._name_kind, lambda attribute: None, self._helper_kind)
        self._inference = TensorInference(
            self.qualname, self._evident_name_kind, self._self_attribute_kind, self._helper_kind
        )
        self._reading: Set[int] = set()  # one-line functions whose return is being read (see `_helper_kind`)
        self._resolving: Set[str] = set()
        self._text: Optional[TextFacts] = None
        self._loaders: Optional[LoaderSources] = None
        self._calls = CallSites(text)
        self._loader_refs = "oader" in text  # record loader references with calls (`DataLoader`, `train_loader`)
        self._qualnames: Dict[int, Optional[str]] = {}
        self._comprehensions: List[list] = []  # what the targets of the comprehensions being walked held before

    # ---- questions rules ask -------------------------------------------------------
    def qualname(self, node: cst.BaseExpression) -> Optional[str]:
        """The dotted name ``node`` refers to through the imports (``torch.randn``), memoised:
        many rules ask it of every call."""
        key = id(node)
        if key not in self._qualnames:
            self._qualnames[key] = self.imports.qualname(node)
        return self._qualnames[key]

    def qualname_ahead(self, node: cst.BaseExpression) -> Optional[str]:
        """``qualname`` of a node the walk has not reached yet, not memoised: an import further
        down (``from matplotlib import pyplot as plt`` in that function) may still change it."""
        return self.imports.qualname(node)

    def tensor_kind(self, node: cst.BaseExpression) -> Optional[str]:
        """``TENSOR``, ``HOST``, ``NOT``, ``BATCH``, ``CPU`` or None (unknown) for ``node`` here."""
        return self._bound_kinds.kind(node) or self._inference.kind(node)

    def non_tensor_on_some_path(self, name: str) -> bool:
        """Does ``name`` hold something known not to be a tensor on some path (``samples = [None]
        * n`` when the caller gave none)?"""
        holder = self._holder(name)
        return holder is not None and holder.known_non_tensor(name)

    def tensor_on_some_path(self, name: str) -> bool:
        """Does ``name`` hold a tensor on some paths and a non-tensor (``loss = 0.0``) on the
        others? Then what only a tensor has (``.item()``) runs on the tensor."""
        holder = self._holder(name)
        kinds = holder.ambiguous.get(name, frozenset()) if holder is not None else frozenset()
        return TENSOR in kinds

    def bound(self, name: str) -> bool:
        """Has ``name`` been bound so far in the current function (a parameter or assignment)?"""
        return name in self._here.kinds

    def bound_names(self) -> FrozenSet[str]:
        """The names bound so far in the current function."""
        return frozenset(self._here.kinds)

    def value_of(
        self, name: str, before: Optional[cst.BaseExpression] = None
    ) -> Optional[cst.BaseExpression]:
        """The expression last assigned to ``name`` in the current function, if simple.

        With ``before`` (an assigned expression that mentions ``name``), the value ``name``
        held when that assignment ran: ``img = img.transpose(2, 0, 1)`` looks back past itself.
        """
        order = self._order_of(before)
        return None if order is _UNKNOWN else self._here.latest(name, order)

    def holds_parameter(self, name: str, before: Optional[cst.BaseExpression] = None) -> bool:
        """Does ``name`` still hold what the current function's caller passed for it (a
        parameter not rebound so far, or before the assignment ``before``)?"""
        order = self._order_of(before)
        if order is _UNKNOWN or not is_parameter(self.scope.function, name):
            return False
        return self._here.binding(name, order) is None

    def updated_in_place(self, name: str, before: Optional[cst.CSTNode] = None) -> Optional[cst.AugAssign]:
        """The augmented assignment (``x /= 255.0``) that bound ``name`` last (before ``before``),
        if it did: the object it held before, updated in place (for an array)."""
        order = self._order_of(before)
        binding = None if order is _UNKNOWN else self._here.binding(name, order)
        return self._here.updates.get(binding[0]) if binding is not None else None

    def value_on_another_path(self, name: str, before: Optional[cst.CSTNode] = None) -> Optional[cst.BaseExpression]:
        """What ``name`` held on a path around the branch that bound ``value_of(name, before)``,
        when a branch did (see ``Bindings.on_another_path``)."""
        order = self._order_of(before)
        return None if order is _UNKNOWN else self._here.on_another_path(name, order)

    def bound_conditionally(self, name: str, before: Optional[cst.BaseExpression] = None) -> bool:
        """Was the value ``value_of(name, before)`` gives bound in a branch that may not have run?"""
        order = self._order_of(before)
        return self._here.conditional(name, None if order is _UNKNOWN else order)

    def _order_of(self, before: Optional[cst.CSTNode]):
        """The number of the assignment ``before`` is the value of, or is (an augmented
        assignment); None: no ``before``, read the latest binding; ``_UNKNOWN``: an expression
        no assignment of this function holds."""
        if before is None:
            return None
        order = self._order.get(id(before))
        return _UNKNOWN if order is None else order

    def unpacked_from(self, name: str) -> Optional[cst.BaseExpression]:
        """The call or name ``name`` was unpacked from (``loader, dataset = build(...)``, ``x, y =
        batch``), if so."""
        unpacked = self._here.unpacked.get(name)
        return unpacked[0] if unpacked is not None else None

    def unpacked_together(self, name: str) -> List[str]:
        """The other names unpacked from the same value as ``name`` (``error`` for ``accuracy`` in
        ``error, accuracy = adapt(...)``)."""
        unpacked = self._here.unpacked
        source = unpacked.get(name)
        return [other for other, (value, _) in unpacked.items() if source and value is source[0] and other != name]

    def unpacked_at(
        self, name: str, before: Optional[cst.CSTNode] = None
    ) -> Optional[Tuple[cst.BaseExpression, int]]:
        """``unpacked_from`` and the position ``name`` took (1 for ``dataset`` above); with
        ``before``, for the value ``name`` held when that assignment ran (``data, props =
        load(p)`` ... ``data = (data - m) / s``)."""
        order = self._order_of(before)
        binding = None if order is _UNKNOWN else self._here.binding(name, order)
        return self._here.unpacked_by_order.get(binding[0]) if binding is not None else None

    def global_value(self, name: str) -> Optional[cst.BaseExpression]:
        """The expression last assigned to ``name`` at module level so far."""
        return self._bindings[self.module_scope].latest(name)

    def entered(self, loop: cst.CSTNode) -> bool:
        """Has the walk already entered this loop (it comes before, or around, the node visited)?"""
        return id(loop) in self._entered_loops

    def bindings_of(self, scope: Scope) -> Optional[Bindings]:
        """What the names of a function (or the module) held when the walk left it."""
        return self._bindings.get(scope)

    @property
    def loaders(self) -> LoaderSources:
        """Where DataLoaders come from (see ``context.loaders``)."""
        if self._loaders is None:
            self._loaders = LoaderSources(self, self._calls)
        return self._loaders

    def parameter_kind(self, function: Scope, name: str) -> Optional[str]:
        """What the file's calls of ``function`` pass for its parameter ``name`` (read once
        the file is walked: in a ``hot_when`` condition, or a rule's ``leave_Module``)."""
        return self._calls.parameter_kind(function, name)

    def attribute_value(self, name: str) -> Optional[cst.BaseExpression]:
        """The one expression assigned to ``self.<name>`` in the enclosing class, if unique."""
        cls = self._class()
        if cls is None:
            return None
        attributes = self._class_attributes.get(cls)
        if attributes is None:
            attributes = self._class_attributes[cls] = self_attributes(cls.node)
        return attributes.get(name)

    def assigned_before(self, value: cst.BaseExpression) -> Dict[str, List[cst.BaseExpression]]:
        """What the names in ``value``, assigned to a ``self`` attribute of the enclosing class
        (``self.dim_t = t ** (dim_t / n)`` in ``__init__``), were given before in that method."""
        cls = self._class()
        return assigned_before(cls.node, value) if cls is not None else {}

    @property
    def uses_cuda(self) -> bool:
        """The file moves data to, or queries, a CUDA device somewhere."""
        if self._uses_cuda is None:
            self._uses_cuda = uses_cuda(self.text)
        return self._uses_cuda

    @property
    def project(self) -> str:
        """The project the file belongs to, for facts shared across it: its top-level package,
        or the folder of a script."""
        if "." in self.module_name or self.path.endswith("__init__.py"):
            return self.module_name.split(".")[0]
        return os.path.dirname(os.path.abspath(self.path))

    @property
    def is_test_module(self) -> bool:
        """The file holds tests (see ``datasets.is_test_module``)."""
        if self._test_module is None:
            self._test_module = is_test_module(self.module, self.imports, self.path)
        return self._test_module

    def in_test_case(self) -> bool:
        """Code a test module runs once: its module level, or a test (``test_*``, a helper
        ``_test_*``) or its set-up (``setUp``, ``setup_method``). A runner or model a test
        module defines runs per batch like any other."""
        if not self.is_test_module:
            return False
        scope: Optional[Scope] = self.scope
        in_function = False
        while scope is not None:
            if scope.kind == "function":
                if scope.name.lstrip("_").lower().startswith(_TEST_CASE_PREFIXES):
                    return True
                in_function = True
            scope = scope.parent
        return not in_function

    @property
    def _text_facts(self) -> TextFacts:
        if self._text is None:
            self._text = TextFacts(self.text, self.imports)
        return self._text

    def in_rare_path(self) -> bool:
        """In code that does not run in normal training: a ``raise``, an ``assert`` (also
        stripped by ``python -O``) or a test's assertion (``self.assertGreater(...)``), an
        ``except`` handler, the arguments of a warning or an error log, a lambda that builds a
        message (``check(ok, lambda: f"got {x.max().item()}")``, called only when the check
        fails), a branch that runs now and then (under a debugging or statistics flag, ``if
        self.debug:``; once every few steps, ``if step % 100 == 0:``; on the first step, ``if
        state["step"] == 0:``; for non-finite values, ``if torch.isnan(loss).any():``), one that runs once (``if not
        self._checked: self._checked = True``, ``if self.cache is None: self.cache = ...``), or one
        that handles an abnormal case it reports (``logging.warning("all invalid, skipping")``) or
        raises an error for."""
        ancestors = self.ancestors
        for index, node in enumerate(ancestors):
            if isinstance(node, (cst.Raise, cst.Assert, cst.ExceptHandler)):
                return True
            if isinstance(node, cst.Lambda) and isinstance(node.body, cst.BaseString):
                return True
            if (
                isinstance(node, cst.FunctionDef) and index + 2 < len(ancestors)
                and ancestors[index + 2] is not node.body.body[0] and runs_once_after_guard(node)
            ):
                return True
            if isinstance(node, cst.Call) and (warning_call(node.func) or assertion_call(node.func)):
                return True
            if isinstance(node, cst.If) and index + 1 < len(ancestors) and self._occasional(node, ancestors[index + 1]):
                return True
            if (
                isinstance(node, cst.If) and index + 1 < len(ancestors)
                and ancestors[index + 1] is node.body
                and (
                    once_only_branch(node.test, node.body) or warning_branch(node.body)
                    or empty_input_branch(node.test, node.body)
                )
            ):
                return True
        return False

    def _in_occasional_branch(self, node: cst.CSTNode) -> bool:
        """Is ``node`` in a branch that runs only now and then (``occasional_branch``), in the
        function being walked (``self.check_weights() if self.configs.debug else None``, ``if
        step % 100 == 0: log_stats(model)``)?"""
        for holder in reversed(self.ancestors):
            holder_type = type(holder)
            if holder_type is cst.FunctionDef:
                return False
            if holder_type in (cst.If, cst.IfExp) and self._occasional(holder, node):
                return True
            node = holder
        return False

    def _occasional(self, branching: Union[cst.If, cst.IfExp], branch: cst.CSTNode) -> bool:
        """Is ``branch`` (a child of ``branching``) the side its test opens only now and then?"""
        taken = "body" if branch is branching.body else "orelse" if branch is branching.orelse else None
        return taken is not None and occasional_branch(branching.test, self._test_value) == taken

    def in_export_branch(self) -> bool:
        """Inside a branch that runs only while exporting, tracing or scripting the model
        (``if torch.onnx.is_in_onnx_export():``, ``if self.onnx_trace:``)."""
        return self._in_branch(export_only_branch)

    def in_validation_statistics(self) -> bool:
        """Inside a loss, in a branch that runs only in evaluation mode (``if not
        model.training:``): statistics of a validation pass, not of a training step."""
        function = self.scope.function
        return function.kind == "function" and loss_code(function) and self._in_branch(evaluation_only_branch)

    def _test_value(self, node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        """For a test: what a name was assigned (``finite = torch.isfinite(x)``), or what
        ``self.<method>()`` returns when the class's method only returns (``self._should_log()``)."""
        if isinstance(node, cst.Name):
            return self.value_of(node.value)
        func = node.func if isinstance(node, cst.Call) else None
        cls = self.scope.enclosing_class
        if cls is None or not isinstance(cls.node, cst.ClassDef) or not (
            isinstance(func, cst.Attribute) and is_name(func.value, "self")
        ):
            return None
        method = method_def(cls.node, func.attr.value)
        return one_line_return(method) if method is not None else None

    def in_off_gpu_branch(self) -> bool:
        """Inside a branch that runs only for tensors off the GPU (``if x.is_cpu:``, ``if
        x.device.type == "mps":``, the ``else`` of ``if x.is_cuda:``)."""
        return self._in_branch(lambda test: off_gpu_branch(test, self.value_of))

    def _in_branch(self, only_branch: Callable[[cst.BaseExpression], Optional[str]]) -> bool:
        """In the branch of an ``if`` that ``only_branch`` says runs only under its condition
        (also the right side of ``cond and ...``), or after an ``if`` whose other branch
        returns (``if x.is_cuda: return fast(x)``)."""
        ancestors = self.ancestors
        for index, node in enumerate(ancestors[:-1]):
            if isinstance(node, cst.If):
                branch = ancestors[index + 1]
                taken = "body" if branch is node.body else "orelse" if branch is node.orelse else None
                if taken is not None and only_branch(node.test) == taken:
                    return True
            elif isinstance(node, cst.BooleanOperation) and ancestors[index + 1] is node.right:
                if guards_right(node, only_branch):
                    return True
            elif isinstance(node, cst.IndentedBlock):
                here = ancestors[index + 1]
                for statement in node.body:
                    if statement is here:
                        break
                    if (isinstance(statement, cst.If) and statement.orelse is None and self._terminates(statement.body)
                            and only_branch(statement.test) == "orelse"):
                        return True
        return False

    def sized(self, node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        """The value, of any kind, whose dimension ``node`` holds (``x.shape[0]``, ``x.size(1)``,
        ``len(x)``, or a name assigned or unpacked from those, also give or take a number:
        ``T - 1``), else None."""
        node = _less_a_number(node)
        if isinstance(node, cst.Name):
            dims = self._here.dims
            if node.value in dims:
                return dims[node.value][0]
            value = self.value_of(node.value)
            return dimension_source(value) if value is not None else None
        return dimension_source(node)

    def dimension(self, node: cst.BaseExpression) -> Optional[int]:
        """Which dimension of its tensor a size holds: 1 for ``x.size(1)`` or ``t`` of ``b, t, c =
        x.shape``, 0 for ``len(x)``; None when unknown."""
        node = _less_a_number(node)
        if isinstance(node, cst.Name):
            if node.value in self._here.dims:
                return self._here.dims[node.value][1]
            node = self.value_of(node.value)
        return dimension_index(node)

    def in_definition(self) -> bool:
        """In a parameter default or a decorator: evaluated once, when the function is defined."""
        return self.inside(cst.Param, cst.Decorator)

    def uses_member(self, name: str, members: FrozenSet[str]) -> bool:
        """Does the current function use ``name.<member>`` for one of ``members``?"""
        return not self._function_facts().members.get(name, frozenset()).isdisjoint(members)

    def _used_with_tensor_members(self, name: str) -> bool:
        return name in self._text_facts.tensor_candidates and self.uses_member(name, ARRAY_MEMBERS)

    def _item_of_tensor_mapping(self, node: cst.BaseExpression) -> bool:
        """``inputs["idx_m"]`` of a parameter annotated ``inputs: Dict[str, Tensor]``, also through
        the name it is stored in (``idx_m = inputs[key]``), and an item of that (``idx_m[-1]``)."""
        mappings = self._tensor_mappings()
        if not mappings:
            return False
        if type(node) is cst.Subscript:
            if type(node.value) is cst.Name and node.value.value in mappings:
                return True
            node = node.value
        if type(node) is not cst.Name:
            return False
        value = self.value_of(node.value)
        return type(value) is cst.Subscript and type(value.value) is cst.Name and value.value.value in mappings

    def surely_tensor(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        """A ``TENSOR`` with more evidence than a parameter's name: a name used like a tensor
        (``x.shape``), annotated as one (or as a dict of them), assigned from such a value or bound to a part of one
        (``row, col = idxs[i]``, ``for c in labels``), a torch function's result, a tensor-only
        method's result (``m.any()``), a tensor attribute of ``self`` (a parameter or a
        buffer), or an expression over one of those. ``depth`` counts the names followed."""
        if self._item_of_tensor_mapping(node):
            return True
        if depth > 4 or self.tensor_kind(node) != TENSOR:
            return False
        if isinstance(node, cst.Name):
            if self.used_as_tensor(node.value) or node.value in self._function_facts().annotated:
                return True
            if node.value in self._here.batch_parts and self._torch_evidence(node.value):
                return True  # `x, y = batch` ... `F.cross_entropy(logits, y)`
            whole = self._here.parts.get(node.value)
            if whole is not None:
                return self.surely_tensor(whole, depth + 1)
            value = self.value_of(node.value)
            return value is not None and value is not node and self.surely_tensor(value, depth + 1)
        if isinstance(node, cst.Comparison):
            return any(self.surely_tensor(operand, depth) for operand in comparison_operands(node))
        if isinstance(node, cst.BinaryOperation):
            return self.surely_tensor(node.left, depth) or self.surely_tensor(node.right, depth)
        if isinstance(node, cst.UnaryOperation):
            return self.surely_tensor(node.expression, depth)
        if isinstance(node, cst.Attribute) and dotted_name(node.value) == "self":
            return True  # its kind comes from what the class assigns to it
        if isinstance(node, (cst.Subscript, cst.Attribute)):
            return self.surely_tensor(node.value, depth)
        if isinstance(node, cst.IfExp):
            return self.surely_tensor(node.body, depth) and self.surely_tensor(node.orelse, depth)
        if isinstance(node, cst.Call):
            qualname = self.qualname(node.func) or ""
            if qualname.startswith("torch."):
                return True
            if qualname == "builtins.sum":
                return self.surely_tensor(node.args[0].value, depth)  # sum(mask): a tensor's rows added
            if self._helper_shows_tensor(node):
                return True  # `contains_known(labels)` of `def contains_known(labels): return is_known(labels).any()`
            if type(node.func) is cst.Name:  # `is_known(labels)`, `criterion(logits, y)`: a tensor where they are
                return any(self.surely_tensor(arg.value, depth + 1) for arg in node.args)
            if isinstance(node.func, cst.Attribute):
                owner = node.func.value
                if isinstance(owner, cst.Name) and owner.value == "self":
                    # self.helper(x) may well return a number; a layer or loss, `self.ce(logits, y)`, a tensor
                    return self.tensor_kind(node.func) == MODULE and any(
                        self.surely_tensor(arg.value, depth + 1) for arg in node.args
                    )
                return node.func.attr.value in _SHOWING_TENSOR_METHODS or self.surely_tensor(owner, depth)
        return False

    def in_comprehension(self) -> bool:
        return self.inside(*COMPREHENSIONS)

    def written_into(self, name: str) -> bool:
        """Has ``name`` been filled element by element with host values since it was bound
        (``name[i] = 0.5``, ``name[i] += v``, ``name.scatter_add_(0, labels, ones)``)? A write of
        a device tensor into it does not count: that is a copy to the host, not building on it."""
        return name in self._here.written

    def used_as_tensor(self, name: str) -> bool:
        """Is ``name`` used with a member only tensors have (``x.shape``, ``x.view(...)``) in
        the current function, and not type-tested (``isinstance(x, ...)``: code that takes
        tensors or collections) nor walked into a join (``x = torch.cat([v.flatten(1) for v in
        x])``: a list until then)? Tells a tensor from a list of tensors."""
        facts = self._function_facts()
        return self._used_with_tensor_members(name) and name not in facts.type_tested and name not in facts.pieces

    def type_tested(self, name: str) -> bool:
        """Does the current function test ``name``'s type (``isinstance(total, Number)``): code
        that takes a tensor or something else?"""
        return name in self._function_facts().type_tested

    def array_like(self, node: cst.BaseExpression) -> bool:
        """A tensor with evidence (``surely_tensor``), or a name of tensor kind that the function
        indexes along several axes (``lengths[:, None]``: no number can be)."""
        if self.surely_tensor(node):
            return True
        return (
            isinstance(node, cst.Name) and self.tensor_kind(node) == TENSOR
            and node.value in self._function_facts().indexed
        )

    def computes_with(self, name: str) -> bool:
        """Does the current function use ``name`` in arithmetic or pass it to a torch op?"""
        facts = self._function_facts()
        return name in facts.computed or name in facts.torch_arguments

    def needed_on_host(self, name: str) -> bool:
        """Does the current function hand ``name`` to numpy, scipy, OpenCV and the like (or call
        ``name.numpy()``), or pass it where a callee takes host values (``pack_padded_sequence``'s
        lengths, also through a helper of this file: ``self.encode(x, lengths)``)?"""
        if self.uses_member(name, frozenset({"numpy"})):
            return True
        return name in self._handed_to_host(self.scope.function, through_helpers=True)

    def passes_to_host_library(self, call: cst.Call, arg: cst.Arg) -> bool:
        """Does ``call`` run a function of this file that hands the parameter ``arg`` binds to
        numpy, scipy, OpenCV and the like (``compute_dtm(target.cpu())``)?"""
        return any(value is arg.value for value in self._bound_to_host_by_helper(self.scope.function, call))

    def _handed_to_host(self, function: Scope, through_helpers: bool) -> Set[str]:
        key = (function, through_helpers)
        if key not in self._host_consumed:
            def host_bound(call: cst.Call) -> List[cst.BaseExpression]:
                passed = list(host_arguments(self.qualname, call))
                return passed + self._bound_to_host_by_helper(function, call) if through_helpers else passed
            self._host_consumed[key] = host_consumed(function.node, self.qualname, host_bound) if function.node else set()
        return self._host_consumed[key]

    def _bound_to_host_by_helper(self, caller: Scope, call: cst.Call) -> List[cst.BaseExpression]:
        """The arguments of ``call`` that bind parameters a function of this file hands to a host
        library or passes where a callee takes host values (one call deep)."""
        name = dotted_name(call.func)
        function = callee(caller, self.module_scope, name) if name else None
        if function is None or function is caller:
            return []
        consumed = self._handed_to_host(function, through_helpers=False)
        if not consumed:
            return []
        return [
            arg.value for position, arg in enumerate(call.args) if not arg.star
            and parameter_at(function, arg.keyword.value if arg.keyword is not None else position) in consumed
        ]

    def defined_here(self, func: cst.BaseExpression) -> bool:
        """Does a call of ``func`` run code of this file: a function the module defines
        (``helper(...)``) or a method of the enclosing class (``self.helper(...)``)?"""
        return self.function_here(func) is not None

    def function_here(self, func: cst.BaseExpression) -> Optional[cst.FunctionDef]:
        """The function of this file a call of ``func`` runs (``helper(...)``, ``self.helper(...)``),
        found in the module or class body, so also when it is defined further down."""
        if isinstance(func, cst.Name):
            if self._module_functions is None:
                self._module_functions = {}
                for statement in self.module.body:
                    if isinstance(statement, cst.FunctionDef):
                        self._module_functions.setdefault(statement.name.value, statement)
            return self._module_functions.get(func.value)
        cls = self.scope.enclosing_class
        if isinstance(func, cst.Attribute) and is_name(func.value, "self") and cls is not None:
            return method_def(cls.node, func.attr.value)
        return None

    def host_library_call(self, node: cst.Call) -> bool:
        """Is ``node`` a call of numpy, scipy, OpenCV and the like, which take host arrays only?"""
        return host_library(self.qualname(node.func))

    def returned_names(self) -> Set[str]:
        """Names the current function returns, alone or in a tuple, list or dict."""
        return self._function_facts().returned

    def joined_lists(self) -> Set[str]:
        """Names the current function joins into a tensor with ``torch.cat``/``torch.stack`` or ``sum()``."""
        return self._function_facts().joined

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

    def leave_Module(self, node: cst.Module) -> None:
        """Resolve hotness that depends on the whole file (helpers of hot code, and functions
        hot code in other files calls); rules' own ``leave_Module`` hooks run after this."""
        for scope in self._scopes:
            kind = self.elsewhere.hot.get(self._local_name(scope) or "")
            if kind is not None and scope.hot_reason is None and not scope.cold:
                scope.hot_reason, scope.hot_kind = f"{scope.name} (called from hot code in another file)", kind
            elif self._backpropagated and scope.kind == "function" and scope.hot_reason is None and not (
                scope.cold or scope.steps
            ) and (scope.name if scope.parent is self.module_scope else f".{scope.name}") in self._backpropagated:
                scope.hot_reason, scope.hot_kind = f"loss {scope.name} (its result is back-propagated)", MODEL
        for scope in self._scopes:  # a step that a loop in another file takes: agent.learn(batch) per iteration
            if scope.kind == "function" and scope.steps and scope.hot_reason is None and not scope.cold and any(
                self.need(f"{name}{_CALLED_IN_LOOP}") for name in self._reached_as(scope)
            ):
                scope.hot_reason, scope.hot_kind = f"training step {scope.name} (called in a loop in another file)", STEP
        settle_helpers(self.module_scope, self._scopes, lambda scope: iterates_dataset(scope.node, self.qualname))

    def _note_backpropagated(self, loss: cst.BaseExpression) -> None:
        """``loss.backward()`` of ``loss = model.neg_log_likelihood(x, tags)`` (or of the call
        itself): the function that computed it is a loss, whatever its name."""
        if isinstance(loss, cst.Name):
            loss = self.value_of(loss.value)
        while isinstance(loss, cst.BinaryOperation):  # (loss / accumulation_steps).backward()
            loss = loss.left
        if not isinstance(loss, cst.Call):
            return
        func = loss.func
        if isinstance(func, cst.Name):
            self._backpropagated.add(func.value)
        elif isinstance(func, cst.Attribute):
            self._backpropagated.add(f".{func.attr.value}")

    def project_facts(self, unsettled: Sequence[Finding]) -> ProjectFacts:
        """What this file tells the other files of the run (see ``torchlint.project``);
        ``unsettled`` are the findings that did not count here."""
        facts = ProjectFacts(offers=self._offers, needs=list(self._needs))
        if not self.module_name:
            return facts
        if "Dataset" in self.text:
            facts.offers.update(self.datasets.offers())
        if "DataLoader" in self.text:
            facts.offers.update(loader_classes(self))
        if self.path.endswith("__init__.py"):
            facts.reexports = reexports(self.module, self.module_name)
        facts.classes = self._classes()
        for name, how in self._passing_tensors().items():
            facts.offers[f"{self.module_name}.{name}{_PASSES_TENSORS}"] = how
        for scope in self._scopes:
            kind = scope.hot_kind_of()
            reaches = sorted(scope.imported) + self._self_calls(scope)
            if kind is not None:
                facts.hot_calls.extend((target, kind) for target in reaches)
            elif reaches and not scope.function.cold:  # what cold code calls stays cold
                for name in self._reached_as(scope.function):
                    facts.calls.setdefault(name, []).extend(reaches)
        waiting: Dict[Scope, Tuple[str, ...]] = {}  # function -> the kinds of hot code that make a finding count
        for finding in unsettled:
            function = finding.hot_scope.function if finding.hot_scope is not None else None
            if function is None or function.cold or not self._reached_as(function):
                continue
            known = waiting.get(function, ())
            kinds = tuple(kind for kind in (MODEL, STEP) if kind in known or _counts_if_hot(finding, function, kind))
            if kinds:
                waiting[function] = kinds
        for function, kinds in waiting.items():
            local = self._local_name(function)
            facts.waiting.extend((name, local, kinds) for name in self._reached_as(function))
        return facts

    def offer(self, key: str, value: str) -> None:
        """Tell the other files of the run ``key`` (see ``torchlint.project``)."""
        self._offers[key] = value

    def need(self, key: str) -> Optional[str]:
        """What another file of the run offered for ``key``; asked for again even when known,
        since a fix in the other file may change the answer."""
        self._needs[key] = None
        return self.elsewhere.known.get(key)

    def project_callee(self, func: cst.BaseExpression) -> Optional[str]:
        """The qualified name of the imported function ``func`` names, if it may belong to the
        project being linted (not torch, numpy or the standard library's usual suspects)."""
        target = self.qualname(func)
        return target if target is not None and not target.startswith(_NOT_PROJECT) else None

    def function_key(self, function: Scope) -> Optional[str]:
        """The qualified name other modules call a module-level ``function`` by, or None."""
        name = self.qualified_name(function)
        return name if name is not None and function.parent is self.module_scope else None

    def qualified_name(self, function: Scope) -> Optional[str]:
        """The qualified name other modules reach a module-level function or a method of a
        module-level class by (``pkg.trainer.Trainer.predict``), or None."""
        local = self._local_name(function)
        return f"{self.module_name}.{local}" if self.module_name and local else None

    def _local_name(self, scope: Scope) -> Optional[str]:
        """``func`` for a module-level function, ``Cls.method`` for a method of a module-level
        class: what other modules can reach; None for anything else."""
        if scope.kind != "function":
            return None
        if scope.parent is self.module_scope:
            return scope.name
        owner = scope.parent
        if owner is not None and owner.kind == "class" and owner.parent is self.module_scope:
            return f"{owner.name}.{scope.name}"
        return None

    def _reached_as(self, function: Scope) -> List[str]:
        """The qualified names calls in other modules reach ``function`` by: its own (a
        subclass elsewhere inherits a method, an object held elsewhere is called by its
        ``__call__``: ``self.accuracy(...)``), and for a method also the same method of each
        base imported from elsewhere (``Base.compute_loss``, which the base's ``forward`` calls
        as ``self.compute_loss``). Empty for anything else."""
        local = self._local_name(function)
        if local is None:
            return []
        if "." not in local:
            return [f"{self.module_name}.{local}"]
        qualified = (self.imports.resolve(base) for base in function.parent.bases)
        names = [f"{base}.{function.name}" for base in qualified if base is not None and not base.startswith(_NOT_PROJECT)]
        return [f"{self.module_name}.{local}", *names]

    def _classes(self) -> Dict[str, Tuple[List[str], List[str]]]:
        """The module-level classes: qualname -> (their bases of the project, qualified; the
        methods they define)."""
        found = {}
        for cls in self.module_scope.methods.values():
            if cls.kind == "class":
                qualified = (self.imports.resolve(base) or f"{self.module_name}.{base}" for base in cls.bases)
                bases = [base for base in qualified if not base.startswith(_NOT_PROJECT)]
                found[f"{self.module_name}.{cls.name}"] = (bases, sorted(cls.methods))
        return found

    def _self_calls(self, scope: Scope) -> List[str]:
        """``self.method(...)`` calls from a method of a module-level class, as the qualified
        name of that class's method: a subclass elsewhere may define it."""
        function = scope.function
        local = self._local_name(function)
        if local is None or "." not in local:
            return []
        owner = f"{self.module_name}.{local.partition('.')[0]}"
        return sorted(f"{owner}.{name[5:]}" for name in scope.called if name.startswith("self.") and "." not in name[5:])

    # ---- names --------------------------------------------------------------------------
    @property
    def _here(self) -> Bindings:
        """The bindings of the function (or module) being walked."""
        return self._current

    def _holder(self, name: str) -> Optional[Bindings]:
        """The bindings ``name`` resolves to here: the current function's, an enclosing
        function's, or the module's."""
        scope: Optional[Scope] = self.scope.function
        while scope is not None:
            bindings = self._bindings.get(scope)
            if bindings is not None and name in bindings.kinds:
                return bindings
            scope = scope.parent
        return None

    def _name_kind(self, name: str) -> Optional[str]:
        holder = self._holder(name)
        return None if holder is None else holder.kinds[name]

    def _helper(self, call: cst.Call) -> Tuple[Optional[cst.FunctionDef], Optional[str]]:
        """The function of this file that ``call`` calls by name, else what the module of
        its project callee tells of it (see ``_passing_tensors``)."""
        function = self.function_here(call.func) if type(call.func) is cst.Name else None
        if function is not None:
            return function, None
        callee = self.project_callee(call.func)
        return None, None if callee is None else self.need(f"{callee}{_PASSES_TENSORS}")

    def _helper_kind(self, call: cst.Call, kind: Callable) -> Optional[str]:
        """What a call of a one-line function of the project returns, given its arguments'
        ``kind``: ``is_known(labels)`` of ``def is_known(labels): return labels >= 0`` is a
        tensor where ``labels`` is (another module tells it by key)."""
        function, told = self._helper(call)
        if function is not None:
            passed = arguments_by_parameter(call, function)
            return self._returned_kind(function, lambda name: kind(passed[name]) if name in passed else None)
        return None if told is None else passed_through(kind(arg.value) for arg in call.args)

    def _helper_shows_tensor(self, call: cst.Call) -> bool:
        """Does a one-line function of the project that ``call`` calls return what only a
        tensor gives (``return is_known(labels).any()``, ``return torch.exp(x)``)?"""
        function, told = self._helper(call)
        if function is not None:
            return _shows_tensor(one_line_return(function), self.qualname)
        return told == _SHOWN

    def _returned_kind(self, function: cst.FunctionDef, parameter_kind: Callable) -> Optional[str]:
        """The kind a one-line ``function`` returns, given its parameters' kinds."""
        returned = one_line_return(function)
        if returned is None or id(function) in self._reading:
            return None
        self._reading.add(id(function))
        try:
            inference = TensorInference(self.qualname, parameter_kind, lambda attribute: None, self._helper_kind)
            return inference.kind(returned)
        finally:
            self._reading.discard(id(function))

    def _passing_tensors(self) -> Dict[str, str]:
        """The module's one-line tests of tensors, for other modules' calls: a comparison
        (``return labels >= 0``, ``"yes"``) or what shows a tensor by itself (``return
        is_known(labels).any()``, ``_SHOWN``), a tensor where their arguments are. (Others,
        ``return x.mul(x.sigmoid())``, are not told: each file told something is linted again.)"""
        found = {}
        for statement in self.module.body:
            returned = one_line_return(statement) if type(statement) is cst.FunctionDef else None
            shown = _shows_tensor(returned, self.qualname)
            if not (shown or isinstance(returned, cst.Comparison)):
                continue
            params = {param.name.value for param in (*statement.params.posonly_params, *statement.params.params)}
            if self._returned_kind(statement, lambda name: TENSOR if name in params else None) == TENSOR and \
                    self._returned_kind(statement, lambda name: None) is None:
                found[statement.name.value] = _SHOWN if shown else "yes"
        return found

    def _evident_name_kind(self, name: str) -> Optional[str]:
        """A name's kind, and for a local bound to something unknown, what the function shows:
        a tensor if it is used like one (`logits = model(x)` ... `F.cross_entropy(logits, y)`),
        else the kind of the value it was assigned with that evidence."""
        holder = self._holder(name)
        if holder is None:
            return None
        kind = holder.kinds[name]
        if kind is not None or holder is not self._here or name in self._resolving or holder.known_non_tensor(name):
            return kind
        value = holder.latest(name)
        if self._torch_evidence(name, bound_to=value):
            return TENSOR
        if value is None:
            return None
        self._resolving.add(name)
        try:
            return self._inference.kind(value)
        finally:
            self._resolving.discard(name)

    def _torch_evidence(
        self, name: str, function: Optional[Scope] = None, bound_to: Optional[cst.BaseExpression] = None
    ) -> bool:
        """Is ``name`` used in the current function (or ``function``) in a way only torch
        tensors are (``x.backward()``, ``x.detach()``, an argument of ``F.*`` or a torch op)?
        Of a name assigned more than once, only the uses ``name = bound_to`` reaches count:
        ``emb = math.log(10000) / half`` is no tensor because a later ``emb = torch.exp(...)`` is."""
        if name not in self._text_facts.tensor_candidates:
            return False  # the file's text never uses it so: no need to read the function
        facts = self._function_facts(function)
        if name in facts.type_tested or not _torch_only_use(facts, name):
            return False
        if bound_to is None or name not in facts.rebound:
            return True
        key = (id(bound_to), name)  # `a = b = value` binds two names, which may be rebound at different lines
        reached = self._reached.get(key)
        if reached is None:
            code = reaching_code((function or self.scope.function).node, bound_to, name)
            reached = self._reached[key] = facts if code is None else FunctionFacts.of_code(code, self.qualname)
        return _torch_only_use(reached, name)

    def _tensor_mappings(self) -> FrozenSet[str]:
        """The current function's parameters annotated as dicts of tensors (``Dict[str, Tensor]``),
        read from its signature alone (cheaper than its facts, which walk its body)."""
        function = self.scope.function
        found = self._mappings.get(function)
        if found is None:
            node = function.node
            params = node.params if isinstance(node, cst.FunctionDef) else None
            found = self._mappings[function] = frozenset(
                param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params)
                if param.annotation is not None and maps_to_tensors(param.annotation.annotation, self.qualname)
            ) if params is not None else frozenset()
        return found

    def _function_facts(self, function: Optional[Scope] = None) -> FunctionFacts:
        function = function or self.scope.function
        facts = self._facts.get(function)
        if facts is None:
            facts = self._facts[function] = FunctionFacts.of(function.node, self.qualname)
        return facts

    def _class(self) -> Optional[Scope]:
        cls = self.scope.enclosing_class if self.scope.kind != "class" else self.scope
        return cls if cls is not None and isinstance(cls.node, cst.ClassDef) else None

    def _self_attribute_kind(self, name: str) -> Optional[str]:
        cls = self._class()
        if cls is None or name not in self._text_facts.tensor_attributes:
            return None
        kinds = self._attribute_kinds.get(cls)
        if kinds is None:
            kinds = self._attribute_kinds[cls] = attribute_kinds(cls.node, self.qualname)
        return kinds.get(name)

    def _argument_kind(self, value: cst.BaseExpression) -> Callable[[], Optional[str]]:
        """An argument's kind for call sites, as bound now; for a name bound to something
        unknown, what its function shows, asked only if some rule needs it (after the walk)."""
        kind = self._bound_kinds.kind(value)
        if kind is not None or not isinstance(value, cst.Name) or self._holder(value.value) is not self._here \
                or value.value not in self._text_facts.tensor_candidates:  # no evidence to look for
            return lambda: kind
        function, name = self.scope.function, value.value
        bound_to = self._here.latest(name)
        return lambda: TENSOR if self._torch_evidence(name, function, bound_to) else None

    def _next_order(self) -> int:
        self._assignments += 1
        return self._assignments

    # ---- the traversal ---------------------------------------------------------------
    def _push(self, scope: Scope) -> None:
        self.scope = scope
        self._current = self._bindings[scope.function]

    def _pop(self) -> None:
        assert self.scope.parent is not None
        self.scope = self.scope.parent
        self._current = self._bindings[self.scope.function]

    def visit_Import(self, node: cst.Import) -> None:
        self._add_import(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._add_import(node)

    def _add_import(self, node: cst.CSTNode) -> None:
        """An import changes what names further on refer to: forget what a rule asked ahead."""
        self.imports.add(node, self.scope is self.module_scope)
        self._qualnames.clear()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        bases = tuple(filter(None, (dotted_name(arg.value) for arg in node.bases)))
        scope = Scope("class", node.name.value, self.scope, node, bases=bases)
        self._register(scope)
        self._push(scope)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        name = node.name.value
        owner = self.scope
        cls = owner if owner.kind == "class" else None
        scope = Scope("function", name, owner, node)
        scope.hot_reason, scope.hot_kind = function_hotness(
            name, cls.name if cls else None, self._hot_functions, cls.bases if cls else (),
            module_call=name == "__call__" and cls is not None and _runs_per_call(cls),
        )
        if scope.hot_reason and scope.hot_reason.startswith("loss function"):
            if evaluates_dataset(node, self.qualname):
                scope.hot_reason, scope.hot_kind, scope.cold = None, None, True  # `def epoch_loss(model, loader)`
            elif (cls is None or not loss_class(cls)) and any(
                isinstance(call, cst.Call) and is_training_step_call(call.func) for call in descendants(node.body)
            ):  # `loss_and_grads` of an inference algorithm: it back-propagates, a training step
                scope.hot_reason, scope.hot_kind = f"training step {name}", STEP
        elif cls is not None and name == "compute" and method_def(cls.node, "update") is not None:
            scope.cold = True  # a metric's compute(): once per epoch, over the states its update() gathered
        self._register(scope)
        self._scopes.append(scope)
        self._bindings[scope] = bindings = Bindings()
        # Annotations count everywhere (a helper may turn out hot); forward and loss inputs
        # are assumed to be tensors unless they say otherwise.
        assume_tensor = scope.hot_kind == MODEL
        params = node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            if param.name.value not in ("self", "cls"):
                bindings.kinds[param.name.value] = parameter_kind(param, self.qualname, assume_tensor)
        taken = [param for param in (*params.posonly_params, *params.params) if param.name.value not in ("self", "cls")]
        first = taken[0].name.value if taken and cls is not None and name not in BATCH_HOOKS else None
        if first is not None and scope.hot_kind == STEP and bindings.kinds[first] is None:
            bindings.kinds[first] = BATCH  # training_step(self, batch, batch_idx): what the loader gave
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                bindings.kinds[star.name.value] = NOT
        self._push(scope)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._pop()

    def _register(self, scope: Scope) -> None:
        """Make a function or class findable by name from where it is defined."""
        self._definitions_here().methods[scope.name] = scope

    def _definitions_here(self) -> Scope:
        """The scope where a function or class defined here is registered: the class, or the function."""
        return self.scope if self.scope.kind == "class" else self.scope.function

    def scope_left(self, node: Union[cst.FunctionDef, cst.ClassDef]) -> Scope:
        """The scope of the function or class whose ``leave_*`` a rule is in (the context has left it)."""
        return self._definitions_here().methods[node.name.value]

    def visit_For(self, node: cst.For) -> None:
        loop = self._enter_loop(node, "for")
        batches = loop.hot_kind == STEP
        if not (isinstance(node.target, cst.Tuple) and self._bind_zipped(node.target, node.iter, batches)):
            self._bind_elements(node.target, node.iter, batches)

    def _bind_elements(self, target: cst.BaseExpression, iterable: cst.BaseExpression, batches: bool = False) -> None:
        """``for row in x``: ``row`` is a part of ``x``, a tensor shown to be one if ``x`` is."""
        kind = self._element_kind(iterable, batches)
        self._bind_target(target, kind, part_of=iterable if kind in (TENSOR, HOST) else None)

    def leave_For(self, node: cst.For) -> None:
        self._pop()

    def _bind_comprehension(self, node) -> None:
        """``[p.item() for p in probs]``: the comprehension's targets, bound on entry (its
        element is walked before its ``for``) among the enclosing function's names, until
        it ends (``leave_ListComp``: what they held before comes back)."""
        for_in = node.for_in
        names = []
        while for_in is not None:
            names.extend(target_names(for_in.target))
            for_in = for_in.inner_for_in
        self._comprehensions.append(self._here.save(names))
        for_in = node.for_in
        while for_in is not None:
            target = for_in.target
            if not (isinstance(target, cst.Tuple) and self._bind_zipped(target, for_in.iter, False)):
                self._bind_elements(target, for_in.iter)
            for_in = for_in.inner_for_in

    def _unbind_comprehension(self, node) -> None:
        self._here.restore(self._comprehensions.pop())

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _bind_comprehension
    leave_ListComp = leave_SetComp = leave_GeneratorExp = leave_DictComp = _unbind_comprehension

    def visit_While(self, node: cst.While) -> None:
        self._enter_loop(node, "while")

    def leave_While(self, node: cst.While) -> None:
        self._pop()

    def _enter_loop(self, node: cst.CSTNode, name: str) -> Scope:
        loop = Scope("loop", name, self.scope, node)
        if self._text_facts.steps and takes_step(node.body) and not self._accumulates_in_step(node):
            loop.hot_reason, loop.hot_kind = "training loop", STEP
        self._scopes.append(loop)
        self._entered_loops.add(id(node))
        self._push(loop)
        return loop

    def _accumulates_in_step(self, loop: cst.CSTNode) -> bool:
        """Does a ``for`` over a ``range`` that back-propagates but steps no optimizer run inside
        a loop of the same function that does (``for it in range(n): for task in
        range(meta_batch): loss.backward()`` ... ``opt.step()``)? It accumulates gradients within
        one step (meta-learning tasks): its iterations are elements of that step, not steps. A
        loop over data (``for batch in batch_group``) still walks batches, one step each."""
        if not (isinstance(loop, cst.For) and isinstance(loop.iter, cst.Call) and is_name(loop.iter.func, "range")):
            return False
        if steps_optimizer(loop.body):
            return False
        scope = self.scope
        while scope.kind == "loop":
            if steps_optimizer(scope.node.body):
                return True
            scope = scope.parent
        return False

    def visit_If(self, node: cst.If) -> None:
        self._here.enter_if(self._assignments)

    def leave_If(self, node: cst.If) -> None:
        bindings = self._here
        if bindings.leave_if(node.orelse is not None):
            self._terminating.add(id(node))
        parent = self.parent
        if isinstance(parent, cst.If) and parent.orelse is node:  # an `elif`: the outer `if`'s else branch ends
            bindings.end_branch(id(node) in self._terminating, self._assignments)

    def leave_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._end_branch(node)

    def leave_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self._end_branch(node)

    def _end_branch(self, block: cst.BaseSuite) -> None:
        parent = self.parent
        if (isinstance(parent, cst.If) and parent.body is block) or isinstance(parent, cst.Else) and isinstance(
            self.ancestors[-2] if len(self.ancestors) > 1 else None, cst.If
        ):
            self._here.end_branch(self._terminates(block), self._assignments)

    def _terminates(self, block: cst.BaseSuite) -> bool:
        """Does ``block`` end in ``return``/``raise``/``continue``/``break`` (or an ``if``
        every branch of which does)?"""
        if not block.body:
            return False
        last = block.body[-1]
        if isinstance(last, cst.SimpleStatementLine):
            return bool(last.body) and isinstance(last.body[-1], _TERMINATORS)
        if isinstance(last, cst.If):
            return id(last) in self._terminating
        return isinstance(last, _TERMINATORS)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        scope = self.scope
        if self._plots and (self.qualname(func) or "").startswith("matplotlib."):
            # a function that draws needs its data on the host: never hot, whatever calls it
            drawing = scope.function
            if drawing.kind == "function":
                drawing.hot_reason, drawing.hot_kind, drawing.cold = None, None, True
        if self._loader_refs:
            self._calls.note(node, scope, self._argument_kind, self.loaders.ref, self._result_kept_on_self)
        else:
            self._calls.note(node, scope, self._argument_kind)
        if isinstance(func, cst.Attribute) and func.attr.value == "backward":
            self._note_backpropagated(func.value)
        elif isinstance(func, cst.Attribute) and func.attr.value in _FILLS and isinstance(func.value, cst.Name):
            self._note_fill(func.value.value, node)
        if is_training_step_call(func) and scope.kind == "function":
            scope.steps = True
        if scope.kind == "class":
            return
        if self._validates_with_object(func):
            return  # `if not self.training: self.error_calculator(...)`: statistics of evaluation
        held_call = _held_call(func)
        if (isinstance(func, cst.Name) or held_call is not None) and not self._in_occasional_branch(node):
            scope.called.add(dotted_name(func) or "")  # helper(x), self.f(x), self.assigner.assign(x)
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value not in self.imports.names:
            built = self.value_of(func.value.value)  # agent = Agent(...) ... agent.update(batch)
            if isinstance(built, cst.Call) and isinstance(built.func, cst.Name):
                scope.called.add(f"{built.func.value}.{func.attr.value}")
                elsewhere = self.project_callee(built.func)  # a class of another module of the project
                if elsewhere is not None:
                    self._call_elsewhere(scope, f"{elsewhere}.{func.attr.value}")
        cls = scope.enclosing_class
        for arg in node.args if cls is not None else ():  # a method handed on: multi_apply(self._targets_single, ...)
            value = arg.value
            if isinstance(value, cst.Attribute) and is_name(value.value, "self") and value.attr.value in cls.methods:
                scope.called.add(f"self.{value.attr.value}")
        target = self.project_callee(func)
        if target is not None:
            self._call_elsewhere(scope, target)
        elif cls is not None and held_call is not None:
            held, method = held_call
            scope.imported.update(f"{name}.{method}" for name in cls.held_imported.get(held, ()))

    def _call_elsewhere(self, scope: Scope, target: str) -> None:
        """Note a call of ``target``, a function of another module of the project; from a loop,
        tell that module (a step it takes there runs once per iteration)."""
        scope.imported.add(target)
        if scope.kind == "loop":
            self.offer(f"{target}{_CALLED_IN_LOOP}", "yes")

    def _result_kept_on_self(self) -> bool:
        """Is the result of the call being visited stored on ``self`` (``self.loader = f()``,
        ``self.loaders.append(f())``)?"""
        ancestors = self.ancestors
        parent = ancestors[-1] if ancestors else None
        if type(parent) is cst.Assign:
            return len(parent.targets) == 1 and _self_attribute(parent.targets[0].target)
        if type(parent) is cst.Arg and len(ancestors) > 1:
            func = getattr(ancestors[-2], "func", None)
            return type(func) is cst.Attribute and func.attr.value == "append" and _self_attribute(func.value)
        return False

    def _validates_with_object(self, func: cst.BaseExpression) -> bool:
        """Is ``func`` an object the class holds (``self.accuracy = Accuracy()``), called in a
        branch that runs only in evaluation mode?"""
        cls = self.scope.enclosing_class
        return (
            isinstance(func, cst.Attribute) and is_name(func.value, "self") and cls is not None
            and func.attr.value in cls.held_objects and self._in_branch(evaluation_only_branch)
        )

    def leave_Assign(self, node: cst.Assign) -> None:
        kind = self._bound_kinds.kind(node.value)
        for target in node.targets:
            self._bind_target(target.target, kind, node.value)
            self._note_write(target.target, kind)
            if isinstance(target.target, cst.Attribute):
                self._note_held(target.target, node.value)

    def _note_held(self, target: cst.Attribute, value: cst.BaseExpression) -> None:
        """``self.criterion = cross_entropy`` (or ``a if c else b``), ``self.accuracy =
        Accuracy()``: the functions, and the objects of the file's classes, a class stores in an
        attribute, for calls of ``self.criterion(...)`` (``scopes.settle_helpers``); an object of
        another module's class runs its ``__call__`` or a method there (``held_imported``)."""
        if not is_name(target.value, "self"):
            return
        values = (value.body, value.orelse) if isinstance(value, cst.IfExp) else (value,)
        names = [value.value for value in values if isinstance(value, cst.Name)]
        built = [value.func for value in values if isinstance(value, cst.Call) and isinstance(value.func, cst.Name)]
        cls = self.scope.enclosing_class if names or built else None
        if cls is None:
            return
        attr = target.attr.value
        cls.held.setdefault(attr, []).extend(names + [func.value for func in built])
        imported = [self.project_callee(func) for func in built]
        cls.held_imported.setdefault(attr, []).extend(name for name in imported if name is not None)
        if built:
            cls.held_objects.add(attr)

    def _note_write(self, target: cst.BaseExpression, kind: Optional[str]) -> None:
        """``t[i] = value``: ``t`` is being filled on the host (unless the value is a device tensor)."""
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and kind != TENSOR:
            self._here.written.add(target.value.value)

    def _note_fill(self, name: str, call: cst.Call) -> None:
        """``counts.scatter_add_(0, labels, ones)`` with host data (not a copy of a device
        tensor made for it, ``targets.cpu()``) and no device tensor: ``counts`` is being filled on
        the host."""
        kinds = {self._bound_kinds.kind(arg.value) for arg in call.args}
        if HOST in kinds and TENSOR not in kinds and not any(
            method_call(inner, "cpu") is not None for arg in call.args for inner in descendants(arg.value)
        ):
            self._here.written.add(name)

    def leave_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind_target(node.target, self._bound_kinds.kind(node.value), node.value)

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        self._note_write(node.target, self._bound_kinds.kind(node.value))
        if isinstance(node.target, cst.Name):
            bindings = self._here
            name = node.target.value
            kind = bindings.kinds.get(name)
            if kind == NOT and isinstance(bindings.latest(name), (cst.Integer, cst.Float)) \
                    and self._bound_kinds.kind(node.value) == TENSOR:
                kind = TENSOR  # `loss = 0.0` ... `loss += aux`: a number plus a tensor is a tensor
            order = self._next_order()
            self._order[id(node)] = order
            bindings.updates[order] = node
            bindings.bind(name, kind if kind in (TENSOR, HOST) else None, None, order)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind_target(node.asname.name, None)

    def _bind_zipped(self, target: cst.Tuple, iterable: cst.BaseExpression, batches: bool) -> bool:
        """``for a, b in zip(x, y)`` / ``for i, row in enumerate(x)``: elements of each side."""
        if not isinstance(iterable, cst.Call) or any(arg.keyword or arg.star for arg in iterable.args):
            return False
        name = self.qualname(iterable.func)
        sources = [arg.value for arg in iterable.args]
        if name == "builtins.enumerate" and 1 <= len(sources) <= 2:
            kinds = [NOT, self._element_kind(sources[0], batches)]
        elif name == "builtins.zip":
            kinds = [self._element_kind(source, batches) for source in sources]
        else:
            return False
        if len(kinds) != len(target.elements):
            return False
        for element, source in zip(target.elements, sources if name == "builtins.zip" else [None, sources[0]]):
            if source is None:
                self._bind_target(element.value, NOT)
            else:
                self._bind_elements(element.value, source, batches)
        return True

    def _element_kind(self, iterable: cst.BaseExpression, batches: bool = False) -> Optional[str]:
        """What iterating ``iterable`` yields: a tensor's rows are tensors where it is;
        what a training loop draws from anything that is not a known container is a batch."""
        kind = self.tensor_kind(iterable)
        if kind in (TENSOR, HOST):
            return kind
        return BATCH if batches and kind is None else None

    def _bind_target(
        self, target: cst.BaseExpression, kind: Optional[str], value: Optional[cst.BaseExpression] = None,
        part_of: Optional[cst.BaseExpression] = None,
    ) -> None:
        """Bind ``target`` to ``value`` of ``kind``, a part (a row, an unpacked piece) of ``part_of``."""
        bindings = self._here
        if isinstance(target, cst.Name):
            order = self._next_order()
            if value is not None:
                self._order[id(value)] = order
            bindings.bind(target.value, kind, value, order, part_of)
        elif isinstance(target, (cst.Tuple, cst.List)):
            if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(target.elements) and not any(
                isinstance(element, cst.StarredElement) for element in (*value.elements, *target.elements)
            ):  # a, b = x, y
                for element, assigned in zip(target.elements, value.elements):
                    self._bind_target(element.value, self._bound_kinds.kind(assigned.value), assigned.value)
                return
            if value is not None:  # what the names held before: read before the first of them is bound
                self._order.setdefault(id(value), self._assignments + 1)
            whose = shape_source(value) if value is not None else None  # `b, t = x.shape`, x of any kind
            shaped = whose if whose is not None and self._bound_kinds.kind(whose) in (TENSOR, HOST) else None
            whole = part_of or value if kind in (TENSOR, HOST) and shaped is None and _splits(value) else None
            element_kind = NOT if shaped is not None else TENSOR if kind == BATCH else kind if whole is not None else None
            for position, element in enumerate(target.elements):
                if isinstance(element, cst.StarredElement):  # a, *rest = x.split(n): a list
                    self._bind_target(element.value, NOT)
                elif kind == BATCH and isinstance(element.value, cst.Name) and self.uses_member(element.value.value, DEVICE_METHODS):
                    self._bind_target(element.value, HOST)  # `for x, lengths in loader` ... `lengths.to(device)`: not yet
                else:
                    self._bind_target(element.value, element_kind, part_of=whole)
                if whose is not None and isinstance(element.value, cst.Name):
                    bindings.dims[element.value.value] = whose, position
                if isinstance(value, (cst.Call, cst.Name)) and isinstance(element.value, cst.Name):
                    bindings.unpacked[element.value.value] = value, position
                    bindings.unpacked_by_order[self._assignments] = value, position  # the binding just made
                if kind == BATCH and isinstance(element.value, cst.Name):
                    bindings.batch_parts.add(element.value.value)


def _torch_only_use(facts: FunctionFacts, name: str) -> bool:
    """Do ``facts`` show ``name`` used as only a tensor is (``x.backward()``, ``F.relu(x)``)?"""
    members = facts.members.get(name, frozenset())
    return name in facts.torch_arguments or TORCH_ONLY_CALL in members or not members.isdisjoint(TORCH_ONLY_MEMBERS)


def _splits(value: Optional[cst.BaseExpression]) -> bool:
    """Does unpacking ``value`` (of tensor kind) give tensors: a tensor's rows (``row, col =
    idxs[i]``) or the pieces a torch call returns (``values, indices = x.topk(k)``)? Not what a
    submodule or helper returns (``loss, logs = self.criterion(...)``: it may hold anything)."""
    if value is None or isinstance(value, (cst.Name, cst.Subscript, cst.Attribute)):
        return True
    return isinstance(value, cst.Call) and not (
        isinstance(value.func, cst.Attribute) and isinstance(value.func.value, cst.Name) and value.func.value.value == "self"
    )


def _counts_if_hot(finding: "Finding", function: Scope, kind: str) -> bool:
    """Would ``finding`` count if hot code of ``kind`` in another file called ``function``?"""
    function.hot_reason, function.hot_kind = "called from another file", kind
    try:
        return finding.counts()
    finally:
        function.hot_reason = function.hot_kind = None


def _less_a_number(node: cst.BaseExpression) -> cst.BaseExpression:
    """``n`` of ``n - 1`` or ``n + 1``: a size give or take a number is still that size."""
    if (
        isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Subtract, cst.Add))
        and isinstance(node.right, cst.Integer)
    ):
        return node.left
    return node


def _runs_per_call(cls: Scope) -> bool:
    """Is ``cls`` a module (``class S(nn.Module)``) whose own ``__call__`` runs on every call of
    it in the model: around its ``forward``, or in its place (a ``__call__`` that does not hand
    over to ``super().__call__``)? A base class whose ``__call__`` only converts inputs for its
    subclasses' ``forward`` is neither."""
    if not based_on(cls.bases, "Module"):
        return False
    call = method_def(cls.node, "__call__")
    return method_def(cls.node, "forward") is not None or call is not None and not any(
        isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "__call__"
        and isinstance(node.func.value, cst.Call) and is_name(node.func.value.func, "super")
        for node in descendants(call)
    )


def _shows_tensor(node: Optional[cst.BaseExpression], qualname: Callable) -> bool:
    """Is ``node`` what only a tensor gives: a torch function's result or a tensor method's (``mask.any()``)?"""
    if type(node) is not cst.Call:  # not isinstance: libcst's node classes are ABCs, slow to test
        return False
    func = node.func
    if type(func) is cst.Attribute and func.attr.value in _SHOWING_TENSOR_METHODS:
        return True
    return (qualname(func) or "").startswith("torch.")


def _self_attribute(node: cst.BaseExpression) -> bool:
    """``self.x``."""
    return type(node) is cst.Attribute and is_name(node.value, "self")


def _held_call(func: cst.BaseExpression) -> Optional[Tuple[str, str]]:
    """(attribute, method) of a call of an object ``self`` holds: ``self.metric(x)`` runs the
    object's ``__call__``, ``self.assigner.assign(...)`` its ``assign``."""
    if type(func) is not cst.Attribute:  # type(), not isinstance: it runs for every call
        return None
    owner = func.value
    if type(owner) is cst.Name:
        return (func.attr.value, "__call__") if owner.value == "self" else None
    if type(owner) is cst.Attribute and type(owner.value) is cst.Name and owner.value.value == "self":
        return owner.attr.value, func.attr.value
    return None
