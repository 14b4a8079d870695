"""Scopes and hot paths: where code runs once per training step.

Hot paths are forward methods, loss functions and loss modules, Lightning ``*_step``
methods, the body of a training loop (a loop that calls ``.backward()`` or
``optimizer.step()``), and helpers called from any of those. Loops only become hot when
their body has been seen, so hotness is settled at the end of the file.

Each hot scope also has a kind: ``MODEL`` code (forward, losses) runs on the model's
tensors once per call; ``STEP`` code (``training_step`` family, training-loop bodies,
configured hot functions) drives a whole step and is where logging lives. Helpers take
the kind of the hot code that calls them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Dict, FrozenSet, Iterator, List, Optional, Set, Tuple

import libcst as cst

from torchlint.syntax import is_name
from torchlint.walker import descendants

MODEL = "model"
STEP = "step"
STEP_METHODS = frozenset({"training_step", "validation_step", "test_step", "predict_step"})
# Callback hooks a trainer calls once per batch (Lightning, Keras-style trainers such as poutyne):
# step code, whose parameters are the trainer, the module and the outputs, not the batch first.
BATCH_HOOKS = frozenset(
    "on_train_batch_start on_train_batch_begin on_train_batch_end on_batch_begin on_batch_start on_batch_end "
    "on_before_backward on_after_backward on_before_optimizer_step".split()
)
# A name ending in `loss` (or a `loss_*` computation: `loss_by_feat`, `loss_labels`) is a loss
# function, unless its prefix (after any underscores: `_check_nan_loss`) says it reports or checks a loss,
# builds one (`build_loss(cfg)`: runs once), or evaluates one over a dataset (`evaluate_loss`).
_LOSS_NAME = re.compile(
    r"^(?!_*(plot|log|print|save|show|report|record|track|update|best|check|assert|validate|verify|warn|is|has"
    r"|get|build|make|create|init|setup|load|select|choose|configure|register"
    r"|estimate|evaluate|evaluation|eval|val|validation|test)_)"
    r"(\w*loss(es)?(_fn|_func|_function)?|loss_\w+)$",
    re.IGNORECASE,
)
# a class or base named like a loss or criterion: FocalLoss, _Loss, SetCriterion, IOUloss, F1_loss
_LOSS_CLASS = re.compile(r"Loss|Criterion|loss$")
_STEP_FUNCTION = re.compile(r"step|iter|batch|update", re.IGNORECASE)
# optimizer, optim_g, opt, opt_d, d_opt, a GAN's optG/optD, a numbered opt1, the AMP scaler
_OPTIMIZER_NAME = re.compile(r"optim|^opt([GD\d])?$|^opt_|_opt$|scaler", re.IGNORECASE)


@dataclass(eq=False)
class Scope:
    kind: str  # "module", "class", "function" or "loop"
    name: str
    parent: Optional["Scope"]
    node: Optional[cst.CSTNode] = None
    hot_reason: Optional[str] = None
    hot_kind: Optional[str] = None  # MODEL or STEP, set together with hot_reason
    methods: Dict[str, "Scope"] = field(default_factory=dict)  # functions and classes defined directly inside
    called: Set[str] = field(default_factory=set)  # names of helpers called from here
    imported: Set[str] = field(default_factory=set)  # qualified names of imported functions called from here
    bases: Tuple[str, ...] = ()  # class scopes: the dotted names of the bases
    cold: bool = False  # evaluation over a dataset: never hot, whatever calls it
    steps: bool = False  # a function that takes an optimisation step (`.backward()` outside loops)
    repeated: bool = False  # hot code calls it per element (`for p in group["params"]: self._project(p)`)
    held: Dict[str, List[str]] = field(default_factory=dict)  # class scopes: attribute -> names stored in it
    held_imported: Dict[str, List[str]] = field(default_factory=dict)  # attribute -> classes of other modules
    held_objects: Set[str] = field(default_factory=set)  # attributes holding an object the class built

    @property
    def function(self) -> "Scope":
        """The nearest enclosing function (or the module): where local names live."""
        scope = self
        while scope.kind in ("loop", "class") and scope.parent is not None:
            scope = scope.parent
        return scope

    @property
    def enclosing_class(self) -> Optional["Scope"]:
        scope = self.parent
        while scope is not None and scope.kind != "class":
            scope = scope.parent
        return scope

    def hot_source(self) -> Optional["Scope"]:
        """The enclosing scope (or this one) that makes this code hot, or None."""
        scope: Optional[Scope] = self
        while scope is not None:
            if scope.hot_reason:
                return scope
            if scope.kind == "class":
                return None
            scope = scope.parent
        return None

    def hot_path(self) -> Optional[str]:
        """Why this scope runs once per step, or None."""
        source = self.hot_source()
        return source.hot_reason if source else None

    def hot_kind_of(self) -> Optional[str]:
        """MODEL or STEP for hot code, None elsewhere."""
        source = self.hot_source()
        return source.hot_kind if source else None

    def repeats_within_hot(self) -> bool:
        """Is this inside a loop nested in the hot scope, so it runs many times per step? (A loop
        over a dict's entries, ``for name, value in losses.items():``, runs once per key: a few
        named values, not the elements of the data; one over an optimizer's ``param_groups``, once
        per group, a few.) All of a helper hot code calls so repeats."""
        source = self.hot_source()
        if source is not None and source.repeated:
            return True
        scope: Optional[Scope] = self
        while scope is not None and scope is not source:
            if scope.kind == "loop" and not (isinstance(scope.node, cst.For) and _walks_few(scope.node.iter)):
                return True
            scope = scope.parent
        return False


def walks_entries(iterable: cst.BaseExpression) -> bool:
    """``d.items()``, ``d.values()``, ``d.keys()``: the entries of a dict."""
    return (
        isinstance(iterable, cst.Call) and not iterable.args and isinstance(iterable.func, cst.Attribute)
        and iterable.func.attr.value in ("items", "values", "keys")
    )


def _walks_few(iterable: cst.BaseExpression) -> bool:
    """A dict's entries, or an optimizer's parameter groups (``enumerate(self.param_groups)``)."""
    if isinstance(iterable, cst.Call) and is_name(iterable.func, "enumerate") and iterable.args:
        iterable = iterable.args[0].value
    return walks_entries(iterable) or isinstance(iterable, cst.Attribute) and iterable.attr.value == "param_groups"


def in_loop(scope: Optional[Scope]) -> bool:
    """Is ``scope`` a loop, or inside one of its function?"""
    while scope is not None and scope.kind != "function":
        if scope.kind == "loop":
            return True
        scope = scope.parent
    return False


def loops_around(scope: Optional[Scope]) -> Iterator[Scope]:
    """The loops ``scope`` is in (itself first, if a loop), innermost first, also those of enclosing functions."""
    while scope is not None:
        if scope.kind == "loop":
            yield scope
        scope = scope.parent


def in_model_code(scope: Scope) -> bool:
    """Is ``scope`` (settled) model code: forward, a loss, or a helper of those?"""
    return scope.hot_kind_of() == MODEL


def loss_code(function: Scope) -> bool:
    """Is ``function`` a loss: named like one (``focal_loss``), or a method of a class named
    like one (``CtcCriterion.forward``, a subclass of ``_Loss``)?"""
    cls = function.enclosing_class
    return bool(_LOSS_NAME.match(function.name)) or cls is not None and loss_class(cls)


def loss_class(cls: Scope) -> bool:
    """Is ``cls`` named like a loss or criterion, or derived from one (``_Loss``, ``*Loss``)?"""
    return _named_like_loss(cls.name, cls.bases)


def _named_like_loss(class_name: str, bases: Tuple[str, ...]) -> bool:
    return any(_LOSS_CLASS.search(name) for name in (class_name, *bases))


def based_on(bases: Tuple[str, ...], name: str) -> bool:
    """Does a class with ``bases`` (dotted names) derive from one called ``name`` (``nn.Module``,
    ``torch.autograd.Function``)?"""
    return any(base.rsplit(".", 1)[-1] == name for base in bases)


def function_hotness(
    name: str, class_name: Optional[str], extra: FrozenSet[str], bases: Tuple[str, ...] = (),
    module_call: bool = False,
) -> Tuple[Optional[str], Optional[str]]:
    """(reason, kind) for a function that runs once per step, else (None, None). ``module_call``:
    the function is the ``__call__`` of a module (``nn.Module`` subclass)."""
    if class_name is not None and name == "forward":
        if any(base.rsplit(".", 1)[-1].endswith("Transform") for base in bases):
            return None, None  # a data transform (PyG's BaseTransform): preprocessing, not the model
        return f"{class_name}.forward", MODEL
    if class_name is not None and name == "__call__" and (
        module_call or _named_like_loss(class_name, bases)
    ):
        return f"{class_name}.__call__", MODEL  # a module's `__call__` (around or instead of forward), or a loss's
    if class_name is not None and name == "backward" and based_on(bases, "Function"):
        return f"{class_name}.backward", MODEL  # an autograd Function's backward runs in every backward pass
    if name in STEP_METHODS or name in extra or class_name is not None and name in BATCH_HOOKS:
        return name, STEP
    if name == "step" and based_on(bases, "Optimizer"):
        return f"{class_name}.step", STEP  # an optimizer's step runs once per training step
    if _LOSS_NAME.match(name):
        return f"loss function {name}", MODEL
    return None, None


def is_training_step_call(func: cst.BaseExpression) -> bool:
    """``loss.backward()`` or ``optimizer.step()``: the marks of a training loop."""
    if not isinstance(func, cst.Attribute):
        return False
    if func.attr.value == "backward":
        return True
    if func.attr.value != "step":
        return False
    owner = func.value
    if isinstance(owner, cst.Attribute):
        owner = owner.attr
    return isinstance(owner, cst.Name) and bool(_OPTIMIZER_NAME.search(owner.value))


def trains(loop: cst.CSTNode) -> bool:
    """Does a training loop both back-propagate (``.backward()``) and step an optimizer, not only
    one of them (a timing loop, a loop over optimizers)?"""
    calls = [node.func for node in descendants(loop) if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)]
    return any(func.attr.value == "backward" for func in calls) and any(
        func.attr.value == "step" and is_training_step_call(func) for func in calls
    )


def settle_helpers(module_scope: Scope, scopes: List[Scope], evaluation: Callable[[Scope], bool]) -> None:
    """Settle hot paths for the whole file: functions that take an optimisation step and are
    called from a loop, then (until nothing changes) functions called from hot code. A class
    constructed in hot code makes its ``__init__`` hot, not its other methods. An ``evaluation``
    that step code calls (``if step % 1000 == 0: evaluate(model, val_loader)``) stays cold. A
    helper called where hot code repeats (a loop in it, or a repeated helper) is repeated, unless it
    takes a step itself: then the loop calling it is the training loop."""
    called_in_loops = {name for scope in scopes if scope.kind == "loop" for name in scope.called}
    for scope in scopes:
        owner = scope.parent.name if scope.parent is not None and scope.parent.kind == "class" else "self"
        if scope.steps and scope.hot_reason is None and not scope.cold and (
            scope.name in called_in_loops or f"self.{scope.name}" in called_in_loops
            or f"{owner}.{scope.name}" in called_in_loops or _STEP_FUNCTION.search(scope.name)
        ):
            scope.hot_reason, scope.hot_kind = f"training step {scope.name}", STEP
    changed = True
    while changed:
        changed = False
        for scope in scopes:
            if scope.hot_path() is None:
                continue
            kind = scope.hot_kind_of()
            repeats = scope.repeats_within_hot()
            for name in scope.called:
                target = callee(scope, module_scope, name)
                targets = [target] if target is not None else _held_functions(scope, module_scope, name)
                for target in targets:
                    if target.hot_reason is None and not target.cold and kind == STEP and not target.steps:
                        target.cold = evaluation(target)
                    if target.hot_reason is None and not target.cold:
                        target.hot_reason = f"{target.name} (called from {scope.hot_path()})"
                        target.hot_kind = kind
                        changed = True
                    if repeats and target.hot_reason is not None and not target.repeated and not target.steps:
                        target.repeated = changed = True


def _held_functions(caller: Scope, module_scope: Scope, name: str) -> List[Scope]:
    """The module's functions a ``self.<attr>(...)`` call may run when the class stores them in
    that attribute (``self.criterion = cross_entropy``, in any branch of ``__init__``), or the
    ``__call__`` of the module's class whose object it stores (``self.accuracy = Accuracy()``);
    for ``self.<attr>.<method>(...)``, that class's method (``self.assigner.assign(...)``)."""
    owner, _, attr = name.partition(".")
    cls = caller.enclosing_class
    if owner != "self" or not attr or cls is None:
        return []
    attr, _, method = attr.partition(".")
    held = [module_scope.methods.get(stored) for stored in cls.held.get(attr, ())]
    functions = [
        scope.methods.get(method or "__call__") if scope is not None and scope.kind == "class"
        else None if method else scope
        for scope in held
    ]
    return [function for function in functions if function is not None and function.kind == "function"]


def constructing(function: Scope) -> bool:
    """Does ``function`` run while its object is built: ``__init__``, or a method of the class
    that only ``__init__`` calls (``self._init_memory_bank(...)``)?"""
    cls = function.parent
    if function.kind != "function" or cls is None or cls.kind != "class":
        return False
    if function.name == "__init__":
        return True
    callers = {
        method.name.value
        for method in cls.node.body.body if isinstance(method, cst.FunctionDef)
        for node in descendants(method)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == function.name and is_name(node.func.value, "self")
    }
    return callers == {"__init__"}


def method_def(cls: cst.ClassDef, name: str) -> Optional[cst.FunctionDef]:
    """The method ``name`` that class ``cls`` defines in its body."""
    return next((node for node in cls.body.body if isinstance(node, cst.FunctionDef) and node.name.value == name), None)


def callee(caller: Scope, module_scope: Scope, name: str) -> Optional[Scope]:
    """The function a call of ``name`` (``helper``, ``self.helper``, or ``Agent.update`` for an
    object of the module's class ``Agent``) from ``caller`` runs."""
    owner_name, _, attr = name.partition(".")
    if attr:
        cls = caller.enclosing_class if owner_name == "self" else module_scope.methods.get(owner_name)
        return cls.methods.get(attr) if cls is not None and cls.kind == "class" else None
    scope: Optional[Scope] = caller
    while scope is not None:
        if scope.kind in ("function", "module") and name in scope.methods:
            target = scope.methods[name]
            if target.kind == "class":
                return target.methods.get("__init__")
            return target
        scope = scope.parent
    return None
