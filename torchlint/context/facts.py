"""Facts read from a whole function or class at once, each computed in one scan of its subtree.

The traversal visits nodes in order, but some questions need the whole definition: is
``x`` used like a tensor anywhere in this function? Is ``self.w`` a parameter? Does this
loop take an optimisation step? Each answer here is computed once, on first demand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst

from torchlint.context.scopes import is_training_step_call
from torchlint.context.tensors import (
    ARRAY_MEMBERS, HOST, MODULE, NOT_TENSOR_ARGUMENTS, TENSOR, TORCH_ONLY_MEMBERS, TensorInference, annotation_kind,
    dimension_source, host_library, is_dtype, is_tensor_op, merge_kinds,
)
from torchlint.syntax import dotted_name, is_name, method_call
from torchlint.walker import descendants, direct_nodes, iter_children, simple_statements

_HOST_COPIES = frozenset({"to", "cpu", "cuda", "tolist", "numpy", "item"})
_JOINS = frozenset("cat concat concatenate stack hstack vstack dstack".split())
_PARAMETERS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
_REGISTERS = frozenset({"register_buffer", "register_parameter"})
# Libraries that take host arrays only: data handed to them has to leave the device.
_NO_GRAD = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad"})
_EXPORT_CHECK = re.compile(r"onnx|is_scripting|is_tracing|tracing|export", re.IGNORECASE)
# Words of a flag that turns on debugging output or statistics (`self.debug`, `collect_stats`).
_DEBUGGING_WORDS = frozenset(
    "debug debugging verbose stats statistics collect profile profiling monitor logging print printing "
    "visualize visualise plot".split()
)
# A counter of steps, batches or calls, as `step % log_every` tests it (`i`, `global_step`, `batch_idx`).
_COUNTER = re.compile(r"step|iter|batch|update|count|call|^(i|it|idx|n_iter)$|_(i|idx)$", re.IGNORECASE)
_PERIOD = re.compile(r"log|print|freq|interval|every|display|report|eval|val|save|checkpoint|vis|summary|plot", re.IGNORECASE)
_WARNING_CALLS = frozenset("warn warning error exception critical fatal".split())
# What `x.size(...)` and `x.view(b, -1)` record among x's members: calls only a tensor answers
# (numpy's `size` is a number, its `view` takes a dtype).
TORCH_ONLY_CALL = "torch-only call"


_MEMBER_USE = re.compile(r"\.\s*(?:" + "|".join(sorted(TORCH_ONLY_MEMBERS | ARRAY_MEMBERS)) + r")\b")
_OWNER = re.compile(r"([A-Za-z_]\w*)\s*$")  # the name right before a `.member`
_SELF_FROM_ITEM = re.compile(r"self\.(\w+)\s*=(?!=)\s*([A-Za-z_]\w*)\s*\[")  # `self.lowers = edges[:-1]`
_REGISTERED = re.compile(r"register_(?:buffer|parameter)\(\s*[\"'](\w+)")
_STEP_CALL = re.compile(r"\.\s*(backward|step)\s*\(")
_IDENTIFIER = re.compile(r"\b[A-Za-z_]\w*\b")


class TextFacts:
    """What a file's text shows at a glance: cheap prefilters before reading functions or
    classes (every answer is a superset of what the syntax tree holds), each computed on
    first use."""

    def __init__(self, text: str, imports) -> None:
        self._text = text
        self._imports = imports

    @cached_property
    def steps(self) -> bool:
        """`.backward(` or `.step(` appears: some loop may take a training step."""
        return bool(_STEP_CALL.search(self._text))

    @cached_property
    def _torch_names(self) -> List[str]:
        """The local names of torch modules (``torch``, ``nn``, ``F``), and ``Parameter``."""
        return [local for local, target in self._imports.names.items() if target.split(".")[0] == "torch"] + ["Parameter"]

    @cached_property
    def tensor_candidates(self) -> FrozenSet[str]:
        """Names used with a tensor member (`x.detach()`, `x.shape`) or inside a torch call."""
        text = self._text
        candidates = set()
        for match in _MEMBER_USE.finditer(text):
            owner = _OWNER.search(text, max(0, match.start() - 80), match.start())
            if owner is not None:
                candidates.add(owner.group(1))
        for name in self._torch_names:  # one scan per alias: a literal prefix is fast to find
            torch_call = re.compile(re.escape(name) + r"\s*\.[\w.]*\(([^()]*)")
            candidates.update(_IDENTIFIER.findall(" ".join(torch_call.findall(text))))
        return frozenset(candidates)

    @cached_property
    def tensor_attributes(self) -> FrozenSet[str]:
        """`self.<name>` assigned from torch (`nn.Parameter(...)`, `torch.zeros(...)`,
        `y.cuda()`), from items of a name some line assigns from torch (`edges = torch.linspace(...)`
        ... `self.lowers = edges[:-1]`), or registered as a buffer or parameter somewhere."""
        from_torch = r"=(?!=)[^\n]*(?:\b(?:" + "|".join(map(re.escape, self._torch_names)) + r")\b|\.cuda\(|\.to\()"
        found = set(re.findall(r"self\.(\w+)\s*(?::[^=\n]*)?" + from_torch, self._text))
        found.update(
            name for name, local in _SELF_FROM_ITEM.findall(self._text)
            if re.search(r"^[ \t]*" + local + r"\s*" + from_torch, self._text, re.MULTILINE)
        )
        return frozenset(found) | frozenset(_REGISTERED.findall(self._text))


@dataclass
class FunctionFacts:
    """How one function's body uses its names."""

    members: Dict[str, Set[str]] = field(default_factory=dict)  # name -> attributes used on it
    type_tested: Set[str] = field(default_factory=set)  # isinstance(name, ...)
    torch_arguments: Set[str] = field(default_factory=set)  # passed to F.* or a torch op
    annotated: Set[str] = field(default_factory=set)  # parameters annotated as tensors
    returned: Set[str] = field(default_factory=set)  # returned, alone or in a tuple, list or dict
    joined: Set[str] = field(default_factory=set)  # passed to torch.cat/stack or sum() (a list made a tensor)
    # rebound to a join of their own pieces: `deltas = torch.cat([d.flatten(1) for d in deltas])` (a list until then)
    pieces: Set[str] = field(default_factory=set)
    computed: Set[str] = field(default_factory=set)  # an operand of arithmetic (`x * 2`, `total += x`)
    indexed: Set[str] = field(default_factory=set)  # indexed along several axes (`x[:, None]`): an array
    rebound: Set[str] = field(default_factory=set)  # assigned more than once (`emb = ...` ... `emb = ...`)

    @classmethod
    def of(cls, root: Optional[cst.CSTNode], qualname: Callable) -> "FunctionFacts":
        facts = cls()
        if root is None:
            return facts
        if isinstance(root, cst.FunctionDef):
            params = root.params
            facts.annotated = {
                param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params)
                if param.annotation is not None and annotation_kind(param.annotation.annotation, qualname) == TENSOR
            }
        facts._scan(descendants(root), qualname)
        return facts

    @classmethod
    def of_code(cls, code: Iterable[cst.CSTNode], qualname: Callable) -> "FunctionFacts":
        """The facts of some of a function's statements and expressions (``reaching_code``)."""
        facts = cls()
        facts._scan((node for root in code for node in descendants(root)), qualname)
        return facts

    def _scan(self, nodes: Iterable[cst.CSTNode], qualname: Callable) -> None:
        assigned: Set[str] = set()
        for node in nodes:
            node_type = type(node)  # not isinstance: libcst's node classes are ABCs, slow to test
            if node_type is cst.Attribute:
                value = node.value
                if type(value) is cst.Name:
                    self.members.setdefault(value.value, set()).add(node.attr.value)
                elif type(value) is cst.Call and (owner := _returning_self(value)) is not None:
                    self.members.setdefault(owner, set()).add(node.attr.value)
            elif node_type is cst.Call:
                self._call(node, qualname)
            elif node_type is cst.Return:
                if node.value is not None:
                    self.returned.update(_returned_names(node.value))
            elif node_type is cst.Subscript:
                if len(node.slice) > 1 and type(node.value) is cst.Name:
                    self.indexed.add(node.value.value)
            elif node_type is cst.BinaryOperation:
                self.computed.update(side.value for side in (node.left, node.right) if type(side) is cst.Name)
            elif node_type is cst.Assign:
                self._note_pieces(node, qualname)
                for target in node.targets:
                    if type(target.target) is cst.Name:
                        name = target.target.value
                        (self.rebound if name in assigned else assigned).add(name)
            elif node_type is cst.AugAssign:
                self.computed.update(side.value for side in (node.target, node.value) if type(side) is cst.Name)

    def _note_pieces(self, node: cst.Assign, qualname: Callable) -> None:
        value, target = node.value, node.targets[0].target
        if len(node.targets) != 1 or type(target) is not cst.Name or type(value) is not cst.Call or not value.args:
            return
        name = qualname(value.func) or ""
        walked = value.args[0].value
        if name.startswith("torch.") and name[6:] in _JOINS and isinstance(walked, _LISTED) and any(
            is_name(walk.iter, target.value) for walk in _comprehension_walks(walked)
        ):
            self.pieces.add(target.value)

    def _call(self, node: cst.Call, qualname: Callable) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and (
            func.attr.value == "size" or func.attr.value == "view" and _shape_arguments(node)
        ):
            self.members.setdefault(func.value.value, set()).add(TORCH_ONLY_CALL)
        name = qualname(func) or ""
        if name == "builtins.isinstance" and node.args and isinstance(node.args[0].value, cst.Name):
            self.type_tested.add(node.args[0].value.value)
        elif (name[6:] in _JOINS and name.startswith("torch.") or name == "builtins.sum") and node.args and isinstance(
            node.args[0].value, cst.Name
        ):
            self.joined.add(node.args[0].value.value)  # `sum(losses)` adds a list's tensors up into one

        elif _takes_tensors(name):
            for arg in node.args:
                if arg.keyword is None and not arg.star and isinstance(arg.value, cst.Name):
                    self.torch_arguments.add(arg.value.value)


def reaching_code(function: cst.CSTNode, value: cst.BaseExpression, name: str) -> Optional[List[cst.CSTNode]]:
    """The code that may read ``name`` as the assignment ``name = value`` of ``function`` binds
    it: the statements after that line up to one that rebinds the name on every path (with that
    one's value, which still reads this binding), all of the outermost loop the line is in. A
    rebinding to an item or a method's result of the name itself (``seeds = seeds[rows, cols]``,
    ``x = x.float()``) holds the same kind of thing: what follows it counts too, and for such a
    ``value`` what the earlier bindings reach, so None (the whole function), as where ``value``
    is bound otherwise (a loop's target, a tuple, a comprehension)."""
    if _same_thing(value, name):
        return None
    body = function.body  # a module's statements, a function's block, a lambda's expression
    statements = body if isinstance(function, cst.Module) else getattr(body, "body", ())
    path = _path_to(statements, value) if isinstance(statements, Sequence) else None
    if path is None:
        return None
    loops = [depth for depth, (block, at) in enumerate(path[:-1]) if type(block[at]) in (cst.For, cst.While)]
    code: List[cst.CSTNode] = []
    if loops:  # the outermost loop runs again from its start: all of it is reached
        path = path[: loops[0] + 1]
        block, at = path[-1]
        code.append(block[at])
    for statements, index in reversed(path):
        for statement in statements[index + 1:]:
            rebinding = _rebinding(statement, name)
            if rebinding is not None and not _same_thing(rebinding, name):
                code.append(rebinding)
                return code
            code.append(statement)
    return code


def _same_thing(value: cst.BaseExpression, name: str) -> bool:
    """Is ``value`` an item, attribute or method result of ``name`` itself (``name[rows]``, ``name.float()``)?"""
    return _chain_root(value, lambda call: True, attributes=True) == name


_Path = List[Tuple[Sequence[cst.CSTNode], int]]


def _path_to(statements: Sequence[cst.CSTNode], value: cst.BaseExpression) -> Optional[_Path]:
    """The blocks, outermost first, down to the line ``... = value``, each with the index of the
    statement that holds it."""
    for index, statement in enumerate(statements):
        if type(statement) is cst.SimpleStatementLine:
            if _assigns(statement, value):
                return [(statements, index)]
        elif type(statement) not in (cst.FunctionDef, cst.ClassDef):
            for block in _blocks(statement):
                if type(block) is cst.SimpleStatementSuite:  # `if flag: x = y` on one line
                    inner = [(block.body, 0)] if _assigns(block, value) else None
                else:
                    inner = _path_to(block.body, value)
                if inner is not None:
                    return [(statements, index), *inner]
    return None


def _assigns(line: cst.CSTNode, value: cst.BaseExpression) -> bool:
    return any(type(small) is cst.Assign and small.value is value for small in line.body)


def _blocks(statement: cst.CSTNode) -> Iterator[cst.BaseSuite]:
    """The blocks of a compound statement: an ``if``'s body and those of its ``elif``/``else``, ..."""
    for child in iter_children(statement):
        if isinstance(child, cst.BaseSuite):
            yield child
        elif type(child) in (cst.If, cst.Else, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally, cst.MatchCase):
            yield from _blocks(child)


def _rebinding(statement: cst.CSTNode, name: str) -> Optional[cst.CSTNode]:
    """The value of a line that rebinds ``name`` (``name = torch.exp(-name)``)."""
    if type(statement) is cst.SimpleStatementLine:
        for small in statement.body:
            if type(small) is cst.Assign and any(is_name(target.target, name) for target in small.targets):
                return small.value
    return None


def host_consumed(
    root: cst.CSTNode, qualname: Callable, host_bound: Callable[[cst.Call], Iterable[cst.BaseExpression]]
) -> Set[str]:
    """The names a function hands to numpy, scipy, OpenCV and the like, which take host arrays
    only, or passes where a callee takes host values (``host_bound``: ``pack_padded_sequence``'s
    lengths, a parameter a helper hands on so): passed to them, walked by a loop or comprehension that passes its elements
    (``[linear_sum_assignment(c) for c in C]``), or viewed by a name that is passed
    (``mask = gt[b].byte()`` ... ``distance_transform_edt(mask)``), also in a tuple of them
    (``args = (d_v[i], c_v[i])`` ... ``fsolve(f, x0, args=args)``)."""
    sources: Dict[str, Set[str]] = {}  # a loop's target, or a view's name -> the names it comes from
    passed: List[str] = []
    for node in descendants(root):
        if isinstance(node, (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.For)):
            loop = node.for_in if not isinstance(node, cst.For) else node
            if isinstance(loop.iter, cst.Call) and is_name(loop.iter.func, "range"):
                continue  # an index, not an element of what the bound is the size of
            for target in _names_in(loop.target):
                sources.setdefault(target, set()).update(_names_in(loop.iter))
        elif isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            parts = node.value.elements if isinstance(node.value, (cst.Tuple, cst.List)) else (node,)
            for part in parts:  # `args = (x_v[i], d_v[i])` ... `fsolve(f, x0, args=args)`
                viewed = _viewed(part.value)
                if viewed is not None:
                    sources.setdefault(node.targets[0].target.value, set()).add(viewed)
        elif isinstance(node, cst.Call) and host_library(qualname(node.func)):
            passed.extend(name for arg in node.args for name in _names_in(arg.value))
        elif isinstance(node, cst.Call):
            passed.extend(filter(None, map(_passed_as_is, host_bound(node))))
    names: Set[str] = set()
    while passed:
        name = passed.pop()
        if name not in names:
            names.add(name)
            passed.extend(sources.get(name, ()))
    return names


def _chain_root(value: cst.BaseExpression, follows: Callable[[cst.Call], bool], attributes: bool) -> Optional[str]:
    """The name a chain of items, method calls ``follows`` accepts and (with ``attributes``)
    attributes starts from: ``gt`` of ``gt[b].byte()``; None where the chain stops earlier."""
    while not isinstance(value, cst.Name):
        if isinstance(value, cst.Subscript):
            value = value.value
        elif isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and follows(value):
            value = value.func.value
        elif attributes and isinstance(value, cst.Attribute):
            value = value.value
        else:
            return None
    return value.value


def _viewed(value: cst.BaseExpression) -> Optional[str]:
    """The name ``value`` is an item or a conversion of (``gt`` of ``gt[b].byte()``), if any."""
    return _chain_root(value, lambda call: not call.args, attributes=False)


def _passed_as_is(value: cst.BaseExpression) -> Optional[str]:
    """The name whose values ``value`` passes on the device they are on: ``lengths`` of
    ``lengths[keep].clamp(min=1)``; None for a copy made on the spot (``lengths.to("cpu")``)."""
    return _chain_root(value, lambda call: call.func.attr.value not in _HOST_COPIES, attributes=True)


def _names_in(node: cst.CSTNode) -> Iterator[str]:
    """The variables ``node`` reads (``x`` of ``x.shape``, not ``shape``)."""
    stack = [node]
    while stack:
        inner = stack.pop()
        if isinstance(inner, cst.Name):
            yield inner.value
        else:
            stack.extend([inner.value] if isinstance(inner, cst.Attribute) else iter_children(inner))


def _returned_names(value: cst.BaseExpression) -> Iterator[str]:
    if isinstance(value, cst.Name):
        yield value.value
    elif isinstance(value, (cst.Tuple, cst.List)):
        for element in value.elements:
            yield from _returned_names(element.value)
    elif isinstance(value, cst.Dict):
        for element in value.elements:
            if isinstance(element, cst.DictElement):
                yield from _returned_names(element.value)


_LISTED = (cst.ListComp, cst.GeneratorExp)


def _comprehension_walks(comprehension: cst.BaseExpression) -> Iterator[cst.CompFor]:
    walk = comprehension.for_in
    while walk is not None:
        yield walk
        walk = walk.inner_for_in


def _shape_arguments(call: cst.Call) -> bool:
    """``view(-1)``, ``view(b, -1)``: sizes (integer literals among them), not a dtype."""
    return any(
        isinstance(arg.value, cst.Integer)
        or isinstance(arg.value, cst.UnaryOperation) and isinstance(arg.value.expression, cst.Integer)
        for arg in call.args
    )


def _takes_tensors(qualname: str) -> bool:
    """Does the torch function ``qualname`` take tensors as its positional arguments?"""
    if qualname.startswith("torch.nn.functional."):
        return True
    return qualname.count(".") == 1 and qualname[6:] not in NOT_TENSOR_ARGUMENTS and is_tensor_op(qualname)


def attribute_kinds(cls: cst.ClassDef, qualname: Callable) -> Dict[str, Optional[str]]:
    """The tensor kinds of ``self.<name>`` in a class: parameters and buffers are tensors (they
    move with the module), a torch call's result has its kind (``MODULE`` for a layer or loss),
    anything else is unknown."""
    found: Dict[str, list] = {}
    for method in direct_nodes(cls.body):
        if not isinstance(method, cst.FunctionDef):
            continue
        local: Dict[str, cst.BaseExpression] = {}  # what each plain name was last assigned in the method
        inference = _local_inference(local, qualname)
        for line in simple_statements(method.body, enter_functions=True):
            for node in line.body:
                if isinstance(node, cst.Assign):
                    for target in node.targets:
                        attr = target.target
                        if isinstance(attr, cst.Attribute) and is_name(attr.value, "self"):
                            kind = _assigned_kind(node.value, attr.attr.value, qualname, inference)
                            if kind != "skip":
                                found.setdefault(attr.attr.value, []).append(kind)
                        elif isinstance(attr, cst.Name):
                            local[attr.value] = node.value
                elif isinstance(node, cst.Expr) and _registers(node.value):
                    found.setdefault(str(node.value.args[0].value.evaluated_value), []).append(TENSOR)
    return {name: (None if None in kinds else merge_kinds(kinds)) for name, kinds in found.items()}


def _local_inference(local: Dict[str, cst.BaseExpression], qualname: Callable) -> TensorInference:
    """Kinds that know a plain name by the value it was last assigned (``edges =
    torch.linspace(0, 1, n)`` ... ``self.lowers = edges[:-1]``: a host tensor); each name
    followed once."""
    following: Set[str] = set()

    def name_kind(name: str) -> Optional[str]:
        value = local.get(name)
        if value is None or name in following:
            return None
        following.add(name)
        try:
            return inference.kind(value)
        finally:
            following.discard(name)

    inference = TensorInference(qualname, name_kind, lambda _: None)
    return inference


def _assigned_kind(value: cst.BaseExpression, name: str, qualname: Callable, inference: TensorInference):
    """The kind ``self.<name> = value`` gives; "skip" for ``None`` and for updates of itself,
    unless the update moves it to a device (``self.alpha = self.alpha.to(x.device)``)."""
    if is_name(value, "None"):
        return "skip"
    if any(
        isinstance(node, cst.Attribute) and node.attr.value == name and is_name(node.value, "self")
        for node in descendants(value)
    ):
        moved = method_call(value, "cuda", "to")
        if moved is None or moved.attr.value == "to" and all(is_dtype(arg.value, qualname) for arg in value.args):
            return "skip"
        return TENSOR
    if isinstance(value, cst.Call) and qualname(value.func) in _PARAMETERS:
        return TENSOR
    kind = inference.kind(value)
    return kind if kind in (TENSOR, HOST, MODULE) else None  # MODULE: `self.ce = nn.CrossEntropyLoss()`


def _registers(call: cst.BaseExpression) -> bool:
    """``self.register_buffer("name", ...)`` / ``self.register_parameter("name", ...)``."""
    return (
        isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and is_name(call.func.value, "self")
        and call.func.attr.value in _REGISTERS and bool(call.args) and isinstance(call.args[0].value, cst.SimpleString)
    )


def takes_step(body: cst.CSTNode) -> bool:
    """Does a loop body take an optimisation step itself (``loss.backward()``, ``optimizer.step()``),
    not only in a nested loop?"""
    return any(isinstance(node, cst.Call) and is_training_step_call(node.func) for node in direct_nodes(body))


def steps_optimizer(body: cst.CSTNode) -> bool:
    """Does a loop body step an optimizer itself (``optimizer.step()``), not only in a nested loop?"""
    return any(
        isinstance(node, cst.Call) and is_training_step_call(node.func) and node.func.attr.value == "step"
        for node in direct_nodes(body)
    )


def evaluates_dataset(function: cst.FunctionDef, qualname: Callable) -> bool:
    """Does a function loop over a dataset's batches (``iterates_dataset``), or run a model or
    a loop under no-grad and no model outside it: an evaluation, not one call of a loss? A loss
    walking a list of predictions (``for i, p in enumerate(preds)``), computing statistics under
    no-grad (``with torch.no_grad(): clipfrac = ...``), or running a target network there
    beside the network it trains (``with torch.no_grad(): next_q = self.target(s2)`` ...
    ``q = self.q(s)``), is neither."""
    if iterates_dataset(function, qualname) or any(qualname(decorator.decorator) in _NO_GRAD or (
        isinstance(decorator.decorator, cst.Call) and qualname(decorator.decorator.func) in _NO_GRAD
    ) for decorator in function.decorators):
        return True
    parameters = _parameters(function)
    blocks = [
        node for node in direct_nodes(function.body) if isinstance(node, cst.With) and any(
            isinstance(item.item, cst.Call) and qualname(item.item.func) in _NO_GRAD for item in node.items
        )
    ]
    if not any(_runs_a_model(block.body, parameters) for block in blocks):
        return False
    inside = {id(node) for block in blocks for node in descendants(block)}
    return not any(
        _runs_model_call(node, parameters) for node in descendants(function.body) if id(node) not in inside
    )


def iterates_dataset(function: cst.FunctionDef, qualname: Callable) -> bool:
    """Does a function loop over a dataset's batches (``for x, y in loader``, ``for i, (x, y) in
    enumerate(loader)``, or any loop that feeds a model it is given: ``model(batch)``)?"""
    parameters = _parameters(function)
    for node in direct_nodes(function.body):
        if isinstance(node, cst.For):
            iterated = _iterated_name(node.iter, qualname)
            if iterated is not None and (
                _unpacks_elements(node, qualname) or _calls_a_parameter(node.body, parameters - {iterated})
            ):
                return True
    return False


def _iterated_name(iterable: cst.BaseExpression, qualname: Callable) -> Optional[str]:
    """``loader`` of ``loader``, ``enumerate(loader)``, ``tqdm(loader)``: the plain name whose
    elements are walked, or None."""
    while isinstance(iterable, cst.Call) and iterable.args and qualname(iterable.func) != "builtins.zip":
        if qualname(iterable.func) == "builtins.range":
            return None
        iterable = iterable.args[0].value
    return iterable.value if isinstance(iterable, cst.Name) else None


def _unpacks_elements(loop: cst.For, qualname: Callable) -> bool:
    """``for x, y in loader`` / ``for i, (x, y) in enumerate(loader)``: each element is a tuple."""
    target = loop.target
    if isinstance(loop.iter, cst.Call) and qualname(loop.iter.func) == "builtins.enumerate":
        if not (isinstance(target, cst.Tuple) and len(target.elements) == 2):
            return False
        target = target.elements[1].value
    return isinstance(target, (cst.Tuple, cst.List))


def _parameters(function: cst.FunctionDef) -> Set[str]:
    params = function.params
    return {param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params)}


def _runs_a_model(body: cst.BaseSuite, parameters: Set[str]) -> bool:
    """Does ``body`` loop, or call a parameter, ``self`` or a ``self`` attribute (``model(x)``,
    ``self(x)``, ``self.net(x)``)?"""
    return any(isinstance(node, (cst.For, cst.While)) or _runs_model_call(node, parameters) for node in descendants(body))


def _runs_model_call(node: cst.CSTNode, parameters: Set[str]) -> bool:
    """Is ``node`` a call of a parameter, ``self`` or a ``self`` attribute (``model(x)``,
    ``self(x)``, ``self.net(x)``)?"""
    return isinstance(node, cst.Call) and (
        isinstance(node.func, cst.Name) and (node.func.value in parameters or node.func.value == "self")
        or isinstance(node.func, cst.Attribute) and is_name(node.func.value, "self")
    )


def _calls_a_parameter(body: cst.BaseSuite, parameters: Set[str]) -> bool:
    """Does ``body`` call one of ``parameters`` itself (``model(x)``)?"""
    return any(
        isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in parameters
        for node in descendants(body)
    )


def debugging_flag(test: cst.BaseExpression) -> bool:
    """Is ``test`` a flag for debugging output or statistics (``self.debug``, ``verbose``,
    ``self.collect_stats and ...``)?"""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return debugging_flag(test.left) or debugging_flag(test.right)
    name = dotted_name(test)
    return name is not None and not _DEBUGGING_WORDS.isdisjoint(name.rsplit(".", 1)[-1].lower().split("_"))


def warning_call(func: cst.BaseExpression) -> bool:
    """``warnings.warn``, ``logger.warning``, ``log.error``: a call that reports a problem."""
    name = dotted_name(func)
    return name is not None and name.rsplit(".", 1)[-1] in _WARNING_CALLS


def assertion_call(func: cst.BaseExpression) -> bool:
    """``self.assertGreater``, ``np.testing.assert_allclose``, ``torch.testing.assert_close``: a
    test's check, which runs once per test, not per training step."""
    name = dotted_name(func)
    if name is None:
        return False
    receiver, _, method = name.rpartition(".")
    return method.startswith("assert") and (receiver == "self" or receiver.endswith("testing"))


def log_call(func: cst.BaseExpression) -> bool:
    """A warning call, or ``logger.info`` / ``logging.debug`` / ``self.log.info``: output only."""
    if warning_call(func):
        return True
    receiver, _, level = (dotted_name(func) or "").rpartition(".")
    return level in ("info", "debug") and "log" in receiver.rpartition(".")[2].lower()


def only_branch(test: cst.BaseExpression, basic: Callable[[cst.BaseExpression], Optional[str]]) -> Optional[str]:
    """Which branch of ``if test:`` runs only under a condition that ``basic`` recognises in a
    test without ``not``/``and``/``or`` ("body" when the test holds, "orelse" when it fails):
    "body", "orelse" or None, combining ``not``, ``and`` and ``or`` as logic says."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = only_branch(test.expression, basic)
        return {"body": "orelse", "orelse": "body"}.get(inner or "")
    if isinstance(test, cst.BooleanOperation):
        sides = [only_branch(test.left, basic), only_branch(test.right, basic)]
        either, both = ("orelse", "body") if isinstance(test.operator, cst.Or) else ("body", "orelse")
        if either in sides:  # `a or b` fails only if `a` fails; `a and b` holds only if `a` holds
            return either
        return both if sides == [both, both] else None
    return basic(test)


def guards_right(operation: cst.BooleanOperation, only_branch: Callable[[cst.BaseExpression], Optional[str]]) -> bool:
    """Does the left side of ``a and b`` / ``a or b`` let ``b`` run only under the condition
    ``only_branch`` recognises (``x.is_cpu and t.any()``: ``t.any()`` runs off the GPU only)?"""
    needed = "body" if isinstance(operation.operator, cst.And) else "orelse"
    return only_branch(operation.left) == needed


def evaluation_only_branch(test: cst.BaseExpression) -> Optional[str]:
    """Which branch of ``if test:`` runs only in evaluation mode: the ``else`` of ``if
    self.training:`` (also ``if self.training or x is None:``), the body of ``if not self.training:``."""
    return only_branch(test, lambda part: "orelse" if (dotted_name(part) or "").endswith(".training") else None)


def occasional_branch(
    test: cst.BaseExpression, resolve: Callable[[cst.BaseExpression], Optional[cst.BaseExpression]]
) -> Optional[str]:
    """Which branch of ``if test:`` runs only now and then: under a debugging flag (``if
    self.debug:``), once every few steps (``if step % 100 == 0:``, ``if self._should_log():``),
    on the first step (``if state["step"] == 0:``) or for non-finite values (``if
    torch.isnan(loss).any():``, the ``else`` of ``if torch.isfinite(cost).all():``). ``resolve``
    gives what a name was assigned, or what a method called without arguments returns
    (``self._should_log()``), when known."""
    if debugging_flag(test):
        return "body"

    def basic(part: cst.BaseExpression) -> Optional[str]:
        if isinstance(part, cst.Name) or isinstance(part, cst.Call) and not part.args:
            part = resolve(part) or part
        return _every_few(part) or _first_step(part) or _non_finite(part, resolve)

    return only_branch(test, basic)


def _every_few(test: cst.BaseExpression) -> Optional[str]:
    """"body" for ``step % n == 0``; "orelse" for ``step % n`` and ``step % n != 0``: a counter
    of steps, calls or batches (``i``, ``global_step``, ``self.step_count``, ``(it + 1)``) taken
    modulo a logging period (not ``x.size(1) % 2``, nor every other step, nor the optimizer
    step of gradient accumulation)."""
    zero = _zero_test(test)
    if zero is not None:
        counter, operator = zero
        return {cst.Equal: "body", cst.NotEqual: "orelse"}.get(type(operator)) if _counted(counter) else None
    return "orelse" if _counted(test) else None  # `step % n` is truthy between the steps it is zero on


def _first_step(test: cst.BaseExpression) -> Optional[str]:
    """"body" for ``step == 0``, ``self.global_step == 0``, ``state["step"] == 0``: the first
    step only (an optimizer's state set up for each parameter on its first step)."""
    zero = _zero_test(test)
    if zero is None or not isinstance(zero[1], cst.Equal):
        return None
    counter = zero[0]
    if isinstance(counter, cst.Subscript) and len(counter.slice) == 1 and isinstance(counter.slice[0].slice, cst.Index):
        key = counter.slice[0].slice.value
        name = key.evaluated_value if isinstance(key, cst.SimpleString) else None
    else:
        name = dotted_name(counter)
    return "body" if isinstance(name, str) and "step" in name.rsplit(".", 1)[-1].lower() else None


def _zero_test(test: cst.BaseExpression) -> Optional[Tuple[cst.BaseExpression, cst.BaseCompOp]]:
    """(``x``, the operator) for ``x == 0`` or ``x != 0``."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    comparison = test.comparisons[0]
    zero = isinstance(comparison.comparator, cst.Integer) and comparison.comparator.value == "0"
    return (test.left, comparison.operator) if zero else None


def _counted(node: cst.BaseExpression) -> bool:
    """``step % log_every``: a step counter taken modulo the period of logging, evaluation or
    saving, or a number of at least 5."""
    if not (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo)):
        return False
    counter, period = node.left, node.right
    if isinstance(counter, cst.BinaryOperation) and isinstance(counter.operator, cst.Add):
        counter = counter.left  # (step + 1) % every
    name = dotted_name(counter)
    if name is None or not _COUNTER.search(name.rsplit(".", 1)[-1]):
        return False
    if isinstance(period, cst.Integer):
        return int(period.value, 0) >= 5
    period_name = dotted_name(period)  # `log_every`, `args.print_freq`; not `grad_accumulation_steps`
    return period_name is not None and bool(_PERIOD.search(period_name.rsplit(".", 1)[-1]))


def _non_finite(
    test: cst.BaseExpression, resolve: Callable[[cst.BaseExpression], Optional[cst.BaseExpression]], depth: int = 0
) -> Optional[str]:
    """"body" for a test that holds for non-finite values (``torch.isnan(x).any()``,
    ``math.isinf(v)``), "orelse" for one that holds when all are finite (``x.isfinite().all()``,
    ``finite.all()`` of ``finite = torch.isfinite(a) & torch.isfinite(b)``)."""
    test_type = type(test)
    if depth > 4:
        return None  # `mask = mask & other`: names followed this far are enough
    if test_type is cst.Name:
        value = resolve(test)
        return None if value is None else _non_finite(value, resolve, depth + 1)
    if test_type is cst.UnaryOperation and type(test.operator) is cst.BitInvert:
        return {"body": "orelse", "orelse": "body"}.get(_non_finite(test.expression, resolve, depth + 1) or "")
    if test_type is cst.BinaryOperation and type(test.operator) in (cst.BitAnd, cst.BitOr):
        sides = {_non_finite(test.left, resolve, depth + 1), _non_finite(test.right, resolve, depth + 1)}
        joined = "orelse" if type(test.operator) is cst.BitAnd else "body"  # all finite; any non-finite
        return joined if sides == {joined} else None
    if test_type is not cst.Call:
        return None
    func = test.func
    if type(func) is cst.Attribute:
        check = func.attr.value
        if check in ("item", "all", "any"):
            return _non_finite(func.value, resolve, depth + 1)  # t.isnan().any().item()
    elif type(func) is cst.Name:
        check = func.value
        if check == "bool" and len(test.args) == 1:
            return _non_finite(test.args[0].value, resolve, depth + 1)
    else:
        return None
    return "orelse" if check == "isfinite" else "body" if check in ("isnan", "isinf") else None


def export_only_branch(test: cst.BaseExpression) -> Optional[str]:
    """Which branch of ``if test:`` runs only while exporting, tracing or scripting:
    "body", "orelse" (for ``if not torch.jit.is_scripting():``) or None."""
    return only_branch(test, _export_check)


def _export_check(test: cst.BaseExpression) -> Optional[str]:
    checked = test.func if isinstance(test, cst.Call) else test
    name = dotted_name(checked)
    return "body" if name is not None and _EXPORT_CHECK.search(name.rsplit(".", 1)[-1]) else None


def once_only_branch(test: cst.BaseExpression, body: cst.BaseSuite) -> bool:
    """Does ``if test: body`` run once: the body sets a flag the test reads (``if not
    self._checked: self._checked = True``), fills the attribute the test finds unset (``if
    self.running_hyps is None: self.running_hyps = ...``), or records the key the test finds
    missing (``if "checked" not in log: ... log["checked"] = True``)?"""
    tested = {dotted_name(node) for node in descendants(test) if isinstance(node, cst.Attribute)}
    unset = _unset_attribute(test) or _missing_key(test)
    for small in _direct_statements(body):
        if not isinstance(small, cst.Assign):
            continue
        flag = is_name(small.value, "True") or is_name(small.value, "False")
        assigned = {_stored(target.target) for target in small.targets}
        if (unset is not None and unset in assigned) or (flag and not assigned.isdisjoint(tested)):
            return True
    return False


def _stored(target: cst.BaseExpression) -> Optional[str]:
    """``self.x`` for ``self.x = ...``; ``log["k"]`` for ``log["k"] = ...``."""
    if isinstance(target, cst.Subscript) and len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index):
        key, owner = target.slice[0].slice.value, dotted_name(target.value)
        return f"{owner}[{key.value}]" if isinstance(key, cst.SimpleString) and owner else None
    return dotted_name(target)


def _missing_key(test: cst.BaseExpression) -> Optional[str]:
    """``log["k"]`` for ``"k" not in log`` or ``not "k" in log``."""
    negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
    test = test.expression if negated else test
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    operator = test.comparisons[0].operator
    owner = dotted_name(test.comparisons[0].comparator)
    if not (isinstance(test.left, cst.SimpleString) and owner) or not (
        isinstance(operator, cst.NotIn) or negated and isinstance(operator, cst.In)
    ):
        return None
    return f"{owner}[{test.left.value}]"


def _unset_attribute(test: cst.BaseExpression) -> Optional[str]:
    """``self.x`` for ``self.x is None`` or ``not self.x``."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test = test.expression
    elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(
        test.comparisons[0].operator, cst.Is
    ) and is_name(test.comparisons[0].comparator, "None"):
        test = test.left
    else:
        return None
    return dotted_name(test) if isinstance(test, cst.Attribute) else None


def warning_branch(body: cst.BaseSuite) -> bool:
    """Does the block report a problem (``logging.warning(...)``, ``warnings.warn(...)``, a
    ``raise``)? Then it handles an abnormal case (``if not valid.any(): logging.warning("skip");
    return ...``; ``bad = torch.where(empty)[0].tolist(); raise ValueError(bad)``)."""
    return any(
        isinstance(small, cst.Raise)
        or isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and warning_call(small.value.func)
        for small in _direct_statements(body)
    )


def runs_once_after_guard(function: cst.FunctionDef) -> bool:
    """Does ``function`` return at once after its first run: it starts with ``if self.inited:
    return`` and sets that flag itself (``self.inited = True``, ``self.inited.fill_(1)``,
    ``self.inited.data.copy_(torch.Tensor([True]))``)? Its code after the guard is a lazy
    initialisation (a k-means codebook), run once."""
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    guard = body[0] if body else None
    if not isinstance(guard, cst.If) or guard.orelse is not None:
        return False
    statements = list(_direct_statements(guard.body))
    flag = dotted_name(guard.test)
    if not (flag and flag.startswith("self.") and statements and isinstance(statements[-1], cst.Return)):
        return False
    for node in descendants(function.body):
        if isinstance(node, cst.AssignTarget) and dotted_name(node.target) == flag:
            return True
        method = method_call(node, "fill_", "copy_")
        if method is not None and dotted_name(method.value) in (flag, f"{flag}.data"):
            return True
    return False


def empty_input_branch(test: cst.BaseExpression, body: cst.BaseSuite) -> bool:
    """Does ``if test: body`` return early for an empty input (``if x.numel() == 0: return
    x.sum() * 0``, ``if len(boxes) == 0: return ...``)? It handles an edge case, not a step."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        size = test.expression
    elif (
        isinstance(test, cst.Comparison) and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Equal)
        and isinstance(test.comparisons[0].comparator, cst.Integer) and test.comparisons[0].comparator.value == "0"
    ):
        size = test.left
    else:
        return False
    statements = list(_direct_statements(body))
    return _size_of_value(size) and bool(statements) and isinstance(statements[-1], cst.Return)


def _size_of_value(node: cst.BaseExpression) -> bool:
    """``x.numel()``, ``len(x)``, ``x.shape[0]`` or ``x.size(0)``: how many items a value holds."""
    return dimension_source(node) is not None or (method_call(node, "numel") is not None and not node.args)


def _direct_statements(body: cst.BaseSuite) -> Iterator[cst.BaseSmallStatement]:
    """The small statements directly in a block (not in its nested blocks)."""
    for line in body.body if isinstance(body, cst.IndentedBlock) else (body,):
        if isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            yield from line.body


def off_gpu_branch(test: cst.BaseExpression, value_of: Optional[Callable] = None) -> Optional[str]:
    """Which branch of ``if test:`` runs only for tensors off the GPU (``if x.is_cpu:``,
    ``if x.device.type == "mps":``, ``if mode == "cpu":``, the ``else`` of ``if x.is_cuda:``):
    "body", "orelse" or None.
    With ``value_of``, a name holding such a test counts too (``is_mps = x.device.type == "mps"``)."""
    return only_branch(test, lambda part: _device_check(part, value_of))


def _device_check(test: cst.BaseExpression, value_of: Optional[Callable] = None) -> Optional[str]:
    if isinstance(test, cst.Name) and value_of is not None:
        test = value_of(test.value) or test
    name = dotted_name(test) or ""
    if name.endswith((".is_cpu", ".is_mps")):
        return "body"
    if name.endswith(".is_cuda"):
        return "orelse"
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    left, target = dotted_name(test.left) or "", test.comparisons[0]
    operator, right = target.operator, target.comparator
    devices = _device_names(right)
    if devices is None:
        return None
    if not (left.endswith(".device.type") or left.endswith(".device")):  # `if mode == "cpu":`, a CPU mode
        return "body" if isinstance(operator, (cst.Equal, cst.In)) and devices <= {"cpu", "mps"} and left else None
    if isinstance(operator, (cst.Equal, cst.In)):
        return "body" if "cuda" not in devices else "orelse" if devices == {"cuda"} else None
    if isinstance(operator, (cst.NotEqual, cst.NotIn)):
        return "body" if devices == {"cuda"} else None
    return None


def _device_names(node: cst.BaseExpression) -> Optional[Set[str]]:
    """``{"cpu"}`` for ``"cpu"`` or ``torch.device("cpu")``, ``{"cpu", "mps"}`` for ``("cpu", "mps")``."""
    if isinstance(node, cst.Call) and dotted_name(node.func) in ("torch.device", "device") and node.args:
        node = node.args[0].value
    if isinstance(node, cst.SimpleString):
        return {str(node.evaluated_value).split(":")[0]}
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        names = [_device_names(element.value) for element in node.elements]
        return set().union(*names) if names and all(n is not None for n in names) else None
    return None


# Module methods that return the module itself, so that a member used after them is the module's
# (`model.eval().to(device)` moves `model`).
_RETURNS_SELF = frozenset("eval train half float double bfloat16 requires_grad_ share_memory".split())


def _returning_self(call: cst.Call) -> Optional[str]:
    """``model`` of ``model.eval()``: the module a call of such a method returns."""
    func = call.func
    if type(func) is cst.Attribute and type(func.value) is cst.Name and func.attr.value in _RETURNS_SELF:
        return func.value.value
    return None
