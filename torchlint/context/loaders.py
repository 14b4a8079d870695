"""DataLoaders: which calls build one, what they were given, and where they are iterated.

A loader is often built in one function and iterated in another: at module level and in
``train()``, in ``main()`` and passed to ``train(loader)``, in ``__init__`` and kept on
``self``, or returned by a helper or a Lightning ``train_dataloader`` hook. While the file
is walked, the iterable of a loop becomes a *reference* (a DataLoader call of the same
function, a parameter, a module-level name, an attribute of ``self``, or what one of the
file's functions returns), and calls of the file's own functions record what they pass.
Once the whole file is seen, ``LoaderSources.resolve`` turns a reference into the
DataLoader calls it can hold.
"""

from __future__ import annotations

import re
from typing import Callable, Dict, List, Optional, Set, Tuple

import libcst as cst

from torchlint.context.calls import CallSites, is_parameter
from torchlint.context.keywords import keywords
from torchlint.context.scopes import in_loop, method_def
from torchlint.syntax import assigned_name, dotted_name, is_name, literal_value, positional, string_key
from torchlint.walker import descendants, returned_values, simple_statements

DATALOADER = "torch.utils.data.DataLoader"
LOADER_CLASS = "DataLoader"  # what a module offers the run for its DataLoader subclasses
# The text of files that may build a loader: also a subclass of another file (`AtomsLoader(`).
LOADER_TRIGGERS = ("DataLoader", "Loader(")
# DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, collate_fn, pin_memory, ...)
DATASET_POSITION = 0
NUM_WORKERS_POSITION = 5
PIN_MEMORY_POSITION = 7
SHUFFLE_POSITION = 2
EPOCH_HOOKS = frozenset({"train_dataloader", "val_dataloader"})  # Lightning iterates their loaders every epoch
_ITERATION_WRAPPERS = frozenset({"builtins.enumerate", "tqdm", "tqdm.tqdm", "tqdm.auto.tqdm", "rich.progress.track"})
_MAX_DEPTH = 8  # references followed through at most this many hops
LOADER_NAME = re.compile(r"loader|_iter$|^iter$|batches", re.IGNORECASE)  # train_loader, data_iter
_BATCH_SOURCES = re.compile(r"dataset|batch", re.IGNORECASE)  # with loaders, what a per-batch loop walks
EPOCH_NAME = re.compile(r"epoch", re.IGNORECASE)
_TRAINER_NAME = re.compile(r"trainer$", re.IGNORECASE)  # `trainer`, `pl_trainer`, `self.trainer`, `Trainer(...)`
_FIT_LOADERS = frozenset({"train_dataloaders", "val_dataloaders", "train_dataloader", "val_dataloader"})

Ref = Tuple  # ("loader", call) | ("param", function, name) | ("global", name) | ("attribute", class, name)
#              | ("returned", owner, name): what a function of the module (owner None) or a class returns
#              | ("imported", qualname): what a function of another module of the run returns
#              | ("elements", ((key, ref), ...)): a dict, list or tuple of them (key: a dict's string key)
#              | ("item", ref, key): an item of such a container (key None: any of them)


def dataloader_call(ctx, node: cst.Call, hidden_ok: bool = False) -> bool:
    """A call of ``torch.utils.data.DataLoader`` whose arguments are all visible (with
    ``hidden_ok``, but for a ``**kwargs`` it cannot see)."""
    return loader_class(ctx, node.func) and keywords(ctx, node, hidden_ok) is not None


def loader_classes(ctx) -> Dict[str, str]:
    """This module's DataLoader subclasses, by the key other modules ask for (``loader_class``)."""
    return {
        f"{ctx.module_name}.{name}@class": LOADER_CLASS
        for name, cls in ctx.datasets.classes().items()
        if _takes_workers(cls) and any(loader_class(ctx, base.value) for base in cls.bases)
    }


def _takes_workers(cls: cst.ClassDef) -> bool:
    """Can a call of the DataLoader subclass ``cls`` choose its workers (its ``__init__``, if it
    has one, takes ``num_workers`` or ``**kwargs``)? One that fixes them is no loader to advise."""
    init = method_def(cls, "__init__")
    if init is None:
        return True
    params = init.params
    return isinstance(params.star_kwarg, cst.Param) or any(
        param.name.value == "num_workers" for param in (*params.params, *params.kwonly_params))


def loader_class(ctx, node: cst.BaseExpression, value_of: Optional[Callable] = None, depth: int = 0) -> bool:
    """Is ``node`` the DataLoader class, a subclass the module defines (``class
    InfiniteDataLoader(DataLoader)``), or a name bound to one of them (``loader_cls =
    torch.utils.data.DataLoader``, ``loader = DataLoader if weighted else InfiniteDataLoader``)? ``value_of`` looks names up (the walk's by default)."""
    name = ctx.qualname(node) or ""
    if name == DATALOADER:
        return True
    if depth > 2 or not isinstance(node, cst.Name) or name.startswith(("builtins.", "torch.")):
        return False
    cls = ctx.datasets.classes().get(node.value)
    if cls is not None:
        return _takes_workers(cls) and any(loader_class(ctx, base.value, value_of, depth + 1) for base in cls.bases)
    imported = ctx.project_callee(node)
    if imported is not None:  # a subclass another module of the run defines
        return ctx.need(f"{imported}@class") == LOADER_CLASS
    value = (value_of or ctx.value_of)(node.value)
    if isinstance(value, cst.IfExp):
        return all(loader_class(ctx, branch, value_of, depth + 1) for branch in (value.body, value.orelse))
    return value is not None and loader_class(ctx, value, value_of, depth + 1)  # loader_cls = torch.utils.data.DataLoader


def argument(ctx, node: cst.Call, name: str, position: int, hidden_ok: bool = False) -> Optional[cst.BaseExpression]:
    """The argument passed as ``name=`` (also through a visible ``**kwargs`` dict) or at ``position``."""
    given = keywords(ctx, node, hidden_ok) or {}
    if name in given:
        return given[name]
    args = positional(node)
    return args[position].value if len(args) > position else None


def has_workers(ctx, loader: cst.Call) -> bool:
    """``num_workers`` is given and is not a literal 0."""
    workers = argument(ctx, loader, "num_workers", NUM_WORKERS_POSITION)
    return workers is not None and literal_value(workers) != 0


def unwrap_iteration(ctx, iterable: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """What ``for ... in iterable`` walks: ``loader`` for ``enumerate(tqdm(loader))``, for
    ``metric_logger.log_every(loader, 10)`` (the ``MetricLogger`` of torchvision's reference
    scripts and the many training scripts built on them), and for ``tqdm(loader) if verbose
    else loader``."""
    if isinstance(iterable, cst.IfExp):
        body, orelse = unwrap_iteration(ctx, iterable.body), unwrap_iteration(ctx, iterable.orelse)
        same = body is not None and orelse is not None and dotted_name(body) == dotted_name(orelse)
        return body if same and dotted_name(body) is not None else None
    while isinstance(iterable, cst.Call) and (
        ctx.qualname(iterable.func) in _ITERATION_WRAPPERS
        or (dotted_name(iterable.func) or "").endswith(("tqdm", ".log_every"))
    ):
        args = positional(iterable)
        if not args:
            return None
        iterable = args[0].value
    return iterable


def returned_by_epoch_hook(ctx, node: cst.Call) -> bool:
    """Is ``node`` (a DataLoader call) returned by a ``train_dataloader``/``val_dataloader``
    method (directly, or through the name it is assigned to), by a method bound to such a hook
    (``self.val_dataloader = self._val_dataloader``), or by a method such a hook of its class
    returns the result of? Lightning iterates it every epoch and moves its batches to
    the device. The hook's name is the evidence: its class often has its Lightning base in
    another file (pyannote's tasks)."""
    function = ctx.scope.function
    cls = function.enclosing_class
    if cls is None or not (
        isinstance(ctx.parent, cst.Return) or assigned_name(ctx.parent, node) in ctx.returned_names()
    ):
        return False
    hooks = {f"self.{hook}" for hook in EPOCH_HOOKS}
    if function.name in EPOCH_HOOKS or any(  # `self.val_dataloader = self._val_dataloader` in `__init__`
        isinstance(node, cst.Assign) and dotted_name(node.value) == f"self.{function.name}"
        and any(dotted_name(target.target) in hooks for target in node.targets)
        for node in descendants(cls.node)
    ):
        return True
    return any(  # train_dataloader(self): return self._dataloader_factory("train")
        isinstance(node, cst.Return) and isinstance(node.value, cst.Call)
        and dotted_name(node.value.func) == f"self.{function.name}"
        for hook in (method_def(cls.node, name) for name in EPOCH_HOOKS) if hook is not None
        for node in descendants(hook)
    )


def fitted(call: cst.Call) -> List[cst.BaseExpression]:
    """The loaders ``trainer.fit(model, train_loader, val_loader)`` is given: Lightning's
    ``Trainer.fit`` iterates them every epoch and moves their batches to the device."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value != "fit":
        return []
    owner = func.value.func if isinstance(func.value, cst.Call) else func.value  # `pl.Trainer(...).fit(...)`
    if not _TRAINER_NAME.search((dotted_name(owner) or "").rsplit(".", 1)[-1]):
        return []
    return [
        arg.value for index, arg in enumerate(call.args)
        if (arg.keyword is None and arg.star == "" and index in (1, 2))
        or (arg.keyword is not None and arg.keyword.value in _FIT_LOADERS)
    ]


def passed_through(ctx, call: cst.Call) -> Optional[cst.BaseExpression]:
    """The loader a call hands back to be iterated: the one ``cycled`` walks, or the one
    ``accelerator.prepare(dl)`` wraps."""
    cycled_loader = cycled(ctx, call)
    if cycled_loader is not None:
        return cycled_loader
    return prepared(call, 0) if len(call.args) == 1 else None


def prepared(call: Optional[cst.BaseExpression], position: int) -> Optional[cst.BaseExpression]:
    """What comes back at ``position`` of ``accelerator.prepare(...)``, which hands each object it
    is given back wrapped, in order: ``dl`` of ``model, opt, dl = accelerator.prepare(model, opt, dl)``."""
    if not isinstance(call, cst.Call):
        return None
    func, args = call.func, positional(call)
    if not (isinstance(func, cst.Attribute) and func.attr.value == "prepare" and len(args) == len(call.args) > position):
        return None
    return args[position].value if (dotted_name(func.value) or "").rsplit(".", 1)[-1] == "accelerator" else None


def cycled(ctx, call: cst.Call) -> Optional[cst.BaseExpression]:
    """The loader ``cycle(dl)`` walks again and again: a generator of this file that loops
    ``while True: for x in dl: yield x`` over its parameter."""
    args = positional(call)
    if not isinstance(call.func, cst.Name) or len(args) != 1 or len(call.args) != 1:
        return None
    function = ctx.module_scope.methods.get(call.func.value)
    return args[0].value if function is not None and function.kind == "function" and _cycles(function.node) else None


def _cycles(function: cst.FunctionDef) -> bool:
    """Does the generator ``function`` walk its first parameter in a ``while True`` loop?"""
    params = function.params.params
    if not params:
        return False
    walked = params[0].name.value
    return any(
        isinstance(loop, cst.While) and is_name(loop.test, "True") and any(
            isinstance(inner, cst.For) and is_name(inner.iter, walked)
            and any(isinstance(node, cst.Yield) for node in descendants(inner.body))
            for inner in descendants(loop.body)
        )
        for loop in descendants(function.body)
    )


def lightning_class(ctx, cls, depth: int = 0) -> bool:
    """Is the class scope ``cls`` a Lightning module or data module (``LightningDataModule``, a
    ``*DataModule`` base), also through a base class of this file?"""
    for base in cls.bases:
        if "Lightning" in base or base.endswith("DataModule"):
            return True
        parent = ctx.module_scope.methods.get(base)
        if parent is not None and parent.kind == "class" and depth < 4 and lightning_class(ctx, parent, depth + 1):
            return True
    return False


def walks_batches(loop: cst.For) -> bool:
    """Is ``loop`` named as one over batches or items (``for x in train_loader``, ``for b in
    batches``, ``for i in range(len(dataset))``), not over epochs (``for epoch in range(n)``)?"""
    walked = [name.value for name in descendants(loop.iter) if isinstance(name, cst.Name)]
    if any(EPOCH_NAME.search(name) for name in walked + [dotted_name(loop.target) or ""]):
        return False
    return any(LOADER_NAME.search(name) or _BATCH_SOURCES.search(name) for name in walked)


class LoaderSources:
    """References to DataLoaders across the functions of one file, resolved at its end."""

    def __init__(self, ctx, calls: CallSites) -> None:
        self._ctx = ctx
        self._calls = calls
        self._attributes: Dict[object, Dict[str, List[Tuple[object, cst.BaseExpression]]]] = {}  # per class

    def ref(self, node: Optional[cst.BaseExpression], assigned: Optional[cst.BaseExpression] = None,
            depth: int = 0) -> Optional[Ref]:
        """A reference for the loader ``node`` may be, in the scope being walked (``node`` is
        part of ``assigned`` when following a chain of reassignments)."""
        ctx = self._ctx
        if isinstance(node, cst.Name):
            function = ctx.scope.function
            if not ctx.bound(node.value):
                return ("global", node.value) if function.kind == "function" else None
            value = ctx.value_of(node.value, before=assigned)
            unpacked = ctx.unpacked_at(node.value, assigned) if value is None else None
            element = prepared(*unpacked) if unpacked else None
            if element is not None:  # `model, dl = accelerator.prepare(model, dl)`: the `dl` before it
                return self.ref(element, unpacked[0], depth + 1) if depth < _MAX_DEPTH else None
            value = value or ctx.unpacked_from(node.value)
            if value is not None:  # also `loader, dataset = create_dataloader(...)`
                return self.ref(value, value, depth + 1) if depth < _MAX_DEPTH else None
            return ("param", function, node.value) if is_parameter(function, node.value) else None
        if isinstance(node, cst.Attribute) and dotted_name(node.value) == "self":
            cls = ctx.scope.enclosing_class
            return ("attribute", cls, node.attr.value) if cls is not None else None
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Call) and depth < _MAX_DEPTH:
            return self.ref(node.value, assigned, depth + 1)  # create_dataloader(...)[0], like unpacking its result
        if isinstance(node, cst.Subscript) and depth < _MAX_DEPTH:  # dataloaders[phase]
            container = self.ref(node.value, assigned, depth + 1)
            return ("item", container, string_key(node)) if container is not None else None
        if isinstance(node, _CONTAINERS) and depth < _MAX_DEPTH:
            return _elements(node, lambda value: self.ref(value, assigned, depth + 1))
        if isinstance(node, cst.Call):
            if loader_class(ctx, node.func):
                return ("loader", node)
            inner = unwrap_iteration(ctx, node)
            if inner is node:
                inner = passed_through(ctx, node) or node
            if inner is not node and depth < _MAX_DEPTH:  # `pbar = tqdm(enumerate(loader))`, `cycle(loader)`
                return self.ref(inner, assigned, depth + 1)
            return self._returned(node.func, ctx.scope)
        return None

    def _returned(self, func: cst.BaseExpression, scope) -> Optional[Ref]:
        """What a call of ``func`` in ``scope`` returns: a function of the file, another module's
        (``create_dataloader``), or a method of ``self``'s class."""
        if isinstance(func, cst.Name):
            imported = self._ctx.project_callee(func) if func.value not in self._ctx.module_scope.methods else None
            return ("imported", imported) if imported is not None else ("returned", None, func.value)
        if isinstance(func, cst.Attribute) and dotted_name(func.value) == "self":
            cls = scope if scope.kind == "class" else scope.enclosing_class
            return ("returned", cls, func.attr.value) if cls is not None else None
        return None

    def callers(self, function) -> List[object]:
        """The scopes that call ``function`` (a function scope of this file)."""
        return [site.caller for site in self._calls.of(function)]

    def kept_on_self(self, function) -> bool:
        """Does a call of ``function`` store its result on ``self`` (``self.evalloaders.append(
        self._eval_loader(ds))``: an object that keeps a loader iterates it again)?"""
        return any(site.kept_on_self for site in self._calls.of(function))

    def passed_in_loops(self, function, name: str) -> List[cst.Call]:
        """The DataLoader calls that calls of ``function`` made inside a loop pass for its
        parameter ``name`` (``evaluate(model, val_loader)`` every epoch, not the
        ``evaluate(model, test_loader)`` once after training)."""
        arguments = self._calls.passed(function, name, lambda site: in_loop(site.caller))
        return [loader for argument in arguments for loader in self.resolve(argument.ref)]

    def resolve(self, ref: Optional[Ref]) -> List[cst.Call]:
        """The DataLoader calls ``ref`` can hold (the whole file has been walked)."""
        return [found[1] for found in self._origins(ref) if found[0] == "loader"]

    def imported(self, ref: Optional[Ref]) -> List[str]:
        """The functions of other modules whose result ``ref`` can hold (``create_dataloader``)."""
        return [found[1] for found in self._origins(ref) if found[0] == "imported"]

    def _origins(self, ref: Optional[Ref], depth: int = 0, seen: Optional[Set[Ref]] = None) -> List[Ref]:
        """The DataLoader calls and other modules' functions ``ref`` leads to."""
        seen = set() if seen is None else seen
        if ref is None or depth > _MAX_DEPTH or ref in seen:
            return []
        seen.add(ref)
        if ref[0] in ("loader", "imported"):
            return [ref]
        if ref[0] == "elements":
            return [found for _, element in ref[1] for found in self._origins(element, depth + 1, seen)]
        if ref[0] == "item":
            return [
                found for container in self._containers(ref[1], depth + 1) for key, element in container[1]
                if ref[2] is None or key is None or key == ref[2]
                for found in self._origins(element, depth + 1, seen)
            ]
        found: List[Ref] = []
        for value_ref in self._sources(ref):
            found.extend(self._origins(value_ref, depth + 1, seen))
        return found

    def _containers(self, ref: Optional[Ref], depth: int) -> List[Ref]:
        """The containers of loaders (``elements`` references) ``ref`` leads to: an item is taken
        only from one of those, never from a loader or anything else."""
        if ref is None or depth > _MAX_DEPTH or ref[0] in ("loader", "imported", "item"):
            return []
        if ref[0] == "elements":
            return [ref]
        return [found for source in self._sources(ref) for found in self._containers(source, depth + 1)]

    def returned(self, function) -> List[cst.Call]:
        """The DataLoader calls a function of the file returns (alone or in a tuple)."""
        return self.resolve(("returned", function.parent, function.name))

    def _sources(self, ref: Ref) -> List[Optional[Ref]]:
        ctx = self._ctx
        kind = ref[0]
        if kind == "param":
            return [argument.ref for argument in self._calls.passed(ref[1], ref[2])]
        if kind == "global":
            return [self._value_ref(ctx.module_scope, ctx.global_value(ref[1]))]
        if kind == "attribute":
            if ref[1] not in self._attributes:
                self._attributes[ref[1]] = _attribute_values(ref[1])
            return [self._value_ref(method, value) for method, value in self._attributes[ref[1]].get(ref[2], ())]
        if kind == "returned":
            function = _function(ctx.module_scope if ref[1] is None else ref[1], ref[2])
            if function is None:
                return []
            return [self._value_ref(function, value) for value in returned_values(function.node)]
        return []

    def _value_ref(self, scope, value: Optional[cst.BaseExpression], depth: int = 0,
                   before: Optional[int] = None) -> Optional[Ref]:
        """A reference for ``value``, an expression of ``scope`` (read after the walk), part of
        the assignment numbered ``before`` if given (``dl = accelerator.prepare(dl)``)."""
        if isinstance(value, cst.Name) and depth < _MAX_DEPTH:
            bindings = self._ctx.bindings_of(scope)
            binding = bindings.binding(value.value, before) if bindings is not None else None
            bound = binding[1] if binding is not None else None
            if binding is not None and bound is None:  # `model, dl = accelerator.prepare(model, dl)`
                bound = prepared(*bindings.unpacked_by_order.get(binding[0], (None, 0)))
            if bound is not None:
                return self._value_ref(scope, bound, depth + 1, binding[0])
            if is_parameter(scope, value.value):
                return ("param", scope, value.value)
            return ("global", value.value)
        if isinstance(value, _CONTAINERS) and depth < _MAX_DEPTH:
            return _elements(value, lambda element: self._value_ref(scope, element, depth + 1, before))
        if isinstance(value, cst.Call):
            bindings = self._ctx.bindings_of(scope)
            if loader_class(self._ctx, value.func, bindings.latest if bindings is not None else lambda name: None):
                return ("loader", value)
            inner = passed_through(self._ctx, value)
            if inner is not None and depth < _MAX_DEPTH:
                return self._value_ref(scope, inner, depth + 1, before)
            return self._returned(value.func, scope)
        return None


_CONTAINERS = (cst.Dict, cst.DictComp, cst.List, cst.Tuple)


def _elements(container: cst.BaseExpression, element_ref: Callable[[cst.BaseExpression], Optional[Ref]]) -> Optional[Ref]:
    """``{"train": DataLoader(...), ...}``, ``{x: DataLoader(...) for x in phases}``, ``[a, b]``:
    a reference to each value that may be a loader, by its string key where it has one."""
    if isinstance(container, cst.DictComp):
        values = [(None, container.value)]
    elif isinstance(container, cst.Dict):
        values = [
            (literal_value(element.key) if isinstance(element.key, cst.SimpleString) else None, element.value)
            for element in container.elements if isinstance(element, cst.DictElement)
        ]
    else:
        values = [(None, element.value) for element in container.elements if isinstance(element, cst.Element)]
    refs = tuple((key, ref) for key, value in values if (ref := element_ref(value)) is not None)
    return ("elements", refs) if refs else None


def _function(owner, name: str):
    target = owner.methods.get(name) if owner is not None else None
    return target if target is not None and target.kind == "function" else None


def _attribute_values(cls) -> Dict[str, List[Tuple[object, cst.BaseExpression]]]:
    """For each ``self.<name>`` the class's methods assign: every (method, expression) assigned."""
    values: Dict[str, List[Tuple[object, cst.BaseExpression]]] = {}
    for method in cls.methods.values():
        if method.kind != "function":
            continue
        for line in simple_statements(method.node.body):
            for small in line.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    for target, value in _pairs(small.targets[0].target, small.value):
                        if isinstance(target, cst.Attribute) and dotted_name(target.value) == "self":
                            values.setdefault(target.attr.value, []).append((method, value))
    return values


def _pairs(target: cst.BaseExpression, value: cst.BaseExpression) -> List[Tuple[cst.BaseExpression, cst.BaseExpression]]:
    """What each target of an assignment gets: ``self.model, self.loader = model, loader``."""
    if (
        isinstance(target, cst.Tuple) and isinstance(value, cst.Tuple) and len(target.elements) == len(value.elements)
        and all(isinstance(element, cst.Element) for element in (*target.elements, *value.elements))
    ):
        return [(t.value, v.value) for t, v in zip(target.elements, value.elements)]
    return [(target, value)]
