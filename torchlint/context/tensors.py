"""Tensor-likeness: a small local inference of which expressions hold tensors.

Answers ``TENSOR`` (a tensor, device unknown), ``HOST`` (a tensor known to be in host
memory, e.g. from ``torch.from_numpy`` or ``.cpu()``), ``NOT`` (certainly not a tensor)
or ``None`` (unknown). Rules act on ``TENSOR``/``HOST`` and stay silent on ``None``.
``BATCH`` is what a training loop draws from its loader: a tensor, or a tuple, list or
dict of tensors, so its items are tensors.
"""

from __future__ import annotations

import re
from typing import Callable, List, Optional

import libcst as cst

from torchlint.context.factories import (
    DATA_FACTORIES, LEGACY_CONSTRUCTORS, VARIABLE, data_argument, factory_name, passes,
)
from torchlint.syntax import comparison_operands, dotted_name, is_docstring, keyword, method_call

TENSOR = "tensor"
HOST = "host"
NOT = "not"
BATCH = "batch"
CPU = "cpu"  # the CPU device itself: "cpu", torch.device("cpu"), a name holding one
MODULE = "module"  # an instance of a torch.nn layer or loss (`criterion = nn.CrossEntropyLoss()`): no tensor

# torch.* callables that return something other than a tensor.
_NON_TENSOR_PREFIXES = (
    "torch.nn.", "torch.utils.", "torch.cuda.", "torch.backends.", "torch.distributed.",
    "torch.jit.", "torch.autograd.", "torch.optim.", "torch.onnx.", "torch.compile",
    "torch.device", "torch.Size", "torch.dtype", "torch.finfo", "torch.iinfo",
    "torch.no_grad", "torch.enable_grad", "torch.inference_mode", "torch.set_", "torch.get_",
    "torch.is_", "torch.manual_seed", "torch.seed", "torch.save", "torch.load",
    "torch.Generator", "torch.profiler.", "torch.amp.", "torch.autocast", "torch.fx.",
    "torch.testing.", "torch.hub.", "torch.library.", "torch.export.", "torch.cpu.",
    "torch.mps.", "torch.xpu.", "torch.numel", "torch.typename", "torch.use_deterministic",
    "torch.are_deterministic", "torch.compiler.", "torch.overrides.", "torch.multiprocessing.",
    "torch.result_type", "torch.promote_types", "torch.can_cast", "torch.broadcast_shapes",
    "torch.serialization.", "torch.distributions.", "torch.futures.", "torch.random.", "torch.ao.",
    "torch.quantization.", "torch.version", "torch.mlu.", "torch.npu.", "torch.hpu.", "torch.xla",
    "torch.accelerator.", "torch.package.", "torch.func.", "torch.monitor.", "torch.signal.",
    "torch.equal", "torch.allclose",
)
_TENSOR_PREFIXES = ("torch.nn.functional.",)
# Libraries of host arrays and numbers: what their functions return is no tensor.
_HOST_LIBRARIES = frozenset("numpy scipy sklearn cv2 PIL skimage pandas onnxruntime librosa soundfile".split())
_NUMBER_LIBRARIES = frozenset({"math", "random"})
_MODULE_PACKAGES = frozenset({"torch.nn", "torch.nn.modules"})
_NN_TENSOR_CLASSES = frozenset({"Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"})
# Tensor methods that return something else, and `items`/`keys`: what has them is a dict (a
# parameter annotated `Union[Tensor, Dict[str, Tensor]]`), not a tensor.
_NON_TENSOR_METHODS = frozenset(
    "item tolist numpy size dim ndimension numel nelement data_ptr is_contiguous is_cuda "
    "element_size get_device stride storage_offset is_floating_point is_complex "
    "untyped_storage storage __len__ backward register_hook items keys".split()
)
_HOST_METHODS = frozenset({"cpu"})
_TORCH_KEYWORDS = frozenset({"dim", "keepdim"})
# Tensor methods and builtins that copy a tensor's values to the host, waiting for the device.
HOST_READ_METHODS = frozenset({"item", "tolist", "cpu", "numpy"})
# Those whose result is a numpy array or a Python value, on a tensor or an array alike.
_TO_PYTHON_METHODS = HOST_READ_METHODS - _HOST_METHODS
HOST_READ_BUILTINS = frozenset({"builtins.float", "builtins.int", "builtins.bool"})


def host_read(node: cst.CSTNode) -> Optional[cst.Attribute]:
    """The ``x.item`` of a call that reads a tensor's values to the host (``x.item()``,
    ``x.cpu()``); not ``self.item(ids)``, an embedding named so (a tensor's ``item`` and
    ``tolist`` take no arguments)."""
    method = method_call(node, *HOST_READ_METHODS)
    if method is not None and node.args and method.attr.value in ("item", "tolist") and (
        dotted_name(method.value) or ""
    ).partition(".")[0] == "self":
        return None
    return method
DEVICE_METHODS = frozenset({"cuda", "to"})  # a move to a device (or, with a dtype only, a cast)
DTYPES = frozenset(
    f"torch.{name}" for name in
    "bool uint8 int8 int16 int32 int64 short int long float16 half bfloat16 float32 float float64 double".split()
)
_NON_TENSOR_ATTRS = frozenset("shape dtype device ndim is_cuda requires_grad grad_fn layout names".split())
_TENSOR_ATTRS = frozenset("T mT H mH data real imag grad values indices".split())
# Fields of the outputs Hugging Face models return (`out = model(**batch)`; `out.logits`): tensors.
_MODEL_OUTPUT_TENSORS = frozenset("logits last_hidden_state pooler_output start_logits end_logits".split())
_NON_TENSOR_ANNOTATIONS = frozenset("int float bool str list dict tuple set bytes None".split())


def is_tensor_op(qualname: str) -> bool:
    """Is ``qualname`` a public torch function that computes a tensor from tensors (not a
    factory, a query, or part of an API that returns other things)?"""
    if qualname.startswith("torchvision.ops."):  # box_iou, nms, roi_align: tensors where their inputs are
        return "._" not in qualname and qualname.rsplit(".", 1)[-1][:1].islower()
    if "._" in qualname or not qualname.startswith("torch.") or factory_name(qualname) is not None:
        return False
    last = qualname.rsplit(".", 1)[-1]
    if last.startswith(("is_", "get_")) or last in ("device_count", "current_device", "from_numpy"):
        return False  # torch.mtia.is_available(), torch.neuron.device_count(), ...
    return qualname.startswith(_TENSOR_PREFIXES) or not qualname.startswith(_NON_TENSOR_PREFIXES)


def _module_class(qualname: str) -> bool:
    """``torch.nn.Conv2d``, ``torch.nn.CrossEntropyLoss``: a layer or loss class (not a
    ``Parameter``, nor a function of ``torch.nn.functional``/``init``/``utils``)."""
    package, _, last = qualname.rpartition(".")
    return package in _MODULE_PACKAGES and last[:1].isupper() and last not in _NN_TENSOR_CLASSES


def host_library(name: Optional[str]) -> bool:
    """Is ``name`` (a qualified name) a function of numpy, scipy, OpenCV and the like?"""
    return (name or "").split(".", 1)[0] in _HOST_LIBRARIES


def torch_call_kind(qualname: str, call: cst.Call, kind: Callable) -> Optional[str]:
    """Kind of the result of ``call``, a call of the torch function ``qualname``."""
    if qualname == "torch.from_numpy":
        return HOST
    if qualname in VARIABLE:
        return kind(call.args[0].value) if call.args and call.args[0].keyword is None else None
    if _module_class(qualname):
        return MODULE
    if "._" in qualname:
        return None  # private API: no promises
    factory = factory_name(qualname)
    if factory is not None:
        return _factory_kind(factory, call, kind)
    if is_tensor_op(qualname):
        # An op stays where its inputs are: host in, host out.
        kinds = set()
        for arg in call.args:  # torch.stack([x1, y1], dim=1) is where x1 and y1 are
            if arg.keyword is not None:
                continue
            value = arg.value
            elements = value.elements if isinstance(value, (cst.List, cst.Tuple)) else ()
            kinds.update(kind(element.value) for element in elements) if elements else kinds.add(kind(value))
        return HOST if HOST in kinds and TENSOR not in kinds and None not in kinds else TENSOR
    last = qualname.rsplit(".", 1)[-1]
    if last.startswith(("is_", "get_")) or last in ("device_count", "current_device"):
        return NOT
    return None


def _factory_kind(factory: str, call: cst.Call, kind: Callable) -> Optional[str]:
    if factory in LEGACY_CONSTRUCTORS:
        return HOST
    if passes(call, "device"):
        return _device_kind(call, kind)
    if factory in DATA_FACTORIES:
        data = data_argument(call)
        # A tensor argument keeps its device; anything else is built in host memory.
        return HOST if data is not None and kind(data) in (NOT, None) else TENSOR
    return HOST


def passed_through(kinds) -> Optional[str]:
    """The kind of a layer's or helper's result given its arguments' kinds: a tensor where
    they are (``HOST`` when all are on the host), unknown without a tensor argument."""
    known = set(kinds) & {TENSOR, HOST}
    return (TENSOR if TENSOR in known else HOST) if known else None


def one_line_return(function: cst.FunctionDef) -> Optional[cst.BaseExpression]:
    """What a function whose body is one ``return`` (after its docstring) returns:
    ``def is_known(labels): return labels >= 0``."""
    body = function.body  # (types tested with `type`: libcst's node classes are ABCs, slow to test)
    statements = body.body if type(body) is cst.IndentedBlock else (body,)
    if len(statements) == 2 and is_docstring(statements[0]):
        statements = statements[1:]
    if len(statements) != 1:
        return None
    line = statements[0]
    small = line.body if type(line) in (cst.SimpleStatementLine, cst.SimpleStatementSuite) else ()
    return small[0].value if len(small) == 1 and type(small[0]) is cst.Return else None


def _device_kind(call: cst.Call, kind: Callable) -> str:
    """Where a factory given ``device=`` builds: on the host for ``device=t.device`` of a host
    tensor ``t`` (``torch.tensor(1.0, device=t.device)`` in a helper given host tensors)."""
    device = keyword(call, "device")
    source = device.value.value if device is not None and isinstance(device.value, cst.Attribute) and \
        device.value.attr.value == "device" else None
    return HOST if source is not None and kind(source) == HOST else TENSOR


def annotation_kind(annotation: cst.BaseExpression, qualname: Callable) -> Optional[str]:
    name = qualname(annotation) or ""
    if name.endswith("Tensor"):
        return TENSOR
    if isinstance(annotation, cst.Name) and annotation.value in _NON_TENSOR_ANNOTATIONS:
        return NOT
    if isinstance(annotation, cst.Subscript):  # Optional[int], Union[Tensor, None], List[Tensor], ...
        inner = [element.slice.value for element in annotation.slice if isinstance(element.slice, cst.Index)]
        base = qualname(annotation.value) or ""
        if base.endswith("Optional") and len(inner) == 1:
            return annotation_kind(inner[0], qualname)
        if base.endswith("Union"):
            return _optional_kind(inner, qualname)
        return NOT
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
        return _optional_kind([annotation.left, annotation.right], qualname)  # Tensor | None
    return None


def maps_to_tensors(annotation: cst.BaseExpression, qualname: Callable) -> bool:
    """Is ``annotation`` a dict of tensors (``Dict[str, Tensor]``, ``Mapping[str, torch.Tensor]``)?"""
    if not isinstance(annotation, cst.Subscript):
        return False
    base = qualname(annotation.value) or dotted_name(annotation.value) or ""
    inner = [element.slice.value for element in annotation.slice if isinstance(element.slice, cst.Index)]
    return base.endswith(("Dict", "dict", "Mapping")) and len(inner) == 2 and annotation_kind(inner[1], qualname) == TENSOR


def _optional_kind(members: List[cst.BaseExpression], qualname: Callable) -> Optional[str]:
    """The kind of a union of ``members``: that of its one member besides ``None``."""
    others = [member for member in members if not (isinstance(member, cst.Name) and member.value == "None")]
    return annotation_kind(others[0], qualname) if len(others) == 1 else None


def parameter_kind(param: cst.Param, qualname: Callable, assume_tensor: bool = True) -> Optional[str]:
    """Kind of a hot function's parameter: by annotation; otherwise, with ``assume_tensor``
    (forward and loss inputs), a tensor unless its default says otherwise."""
    if param.annotation is not None:
        kind = annotation_kind(param.annotation.annotation, qualname)
        if kind is not None:
            return kind
    if not assume_tensor:
        return None
    default = param.default
    if default is not None and not (isinstance(default, cst.Name) and default.value == "None"):
        return NOT  # numbers, flags and strings
    if _LIST_NAME.search(param.name.value):
        return NOT  # `gt_bboxes_list`: one item per image, a Python list
    return TENSOR


_LIST_NAME = re.compile(r"_lists?$")


class TensorInference:
    """Kinds of expressions, given the kinds of names and of ``self``'s attributes, and of
    what calls of the project's own functions return (``helper_kind(call, kind)``)."""

    def __init__(
        self, qualname: Callable, name_kind: Callable, attribute_kind: Callable, helper_kind: Optional[Callable] = None,
    ) -> None:
        self._qualname = qualname
        self._name_kind = name_kind
        self._self_attribute_kind = attribute_kind
        self._helper_kind = helper_kind

    def kind(self, node: cst.BaseExpression) -> Optional[str]:
        node_type = type(node)  # not isinstance: libcst's node classes are ABCs, slow to test
        if node_type is cst.Name:
            return self._name_kind(node.value)
        if node_type is cst.Call:
            return self._call_kind(node)
        if node_type is cst.Attribute:
            if type(node.value) is cst.Name and node.value.value == "self":
                return self._self_attribute_kind(node.attr.value)
            return self._attribute_kind(node)
        if node_type is cst.Subscript:
            if shape_source(node.value, self.kind) is not None:
                return NOT  # x.shape[0], x.size()[1:]
            inner = self.kind(node.value)
            if inner == BATCH:
                return TENSOR  # batch["image"], batch[0]
            return inner if inner in (TENSOR, HOST) else None
        if node_type is cst.IfExp:
            return merge_kinds([self.kind(node.body), self.kind(node.orelse)])
        if node_type is cst.BooleanOperation:
            return merge_kinds([self.kind(node.left), self.kind(node.right)])
        if node_type is cst.BinaryOperation:
            if type(node.left) in _SEQUENCE_DISPLAYS or type(node.right) in _SEQUENCE_DISPLAYS:
                return NOT  # `[None] * n`, `[x] + rest`: a list (a tensor takes no list operand)
            return _combine(self.kind(node.left), self.kind(node.right))
        if node_type is cst.UnaryOperation:
            if type(node.operator) is cst.Not:
                return NOT  # `not t` is a Python bool
            inner = self.kind(node.expression)
            return inner if inner in (TENSOR, HOST, NOT) else None
        if node_type is cst.SimpleString and _names_cpu(node):
            return CPU
        if node_type is cst.Comparison:
            return _comparison_kind(self, node)
        return NOT if node_type in _LITERALS or isinstance(node, cst.BaseString) else None

    def _call_kind(self, node: cst.Call) -> Optional[str]:
        func = node.func
        qualname = self._qualname(func)
        if qualname is not None:
            if qualname == "builtins.sum" and len(node.args) == 1:
                inner = self.kind(node.args[0].value)  # sum(mask): adds the tensor's rows, a tensor
                return inner if inner in (TENSOR, HOST) else NOT
            if qualname.startswith("builtins.") or host_library(qualname) or qualname.split(".", 1)[0] in _NUMBER_LIBRARIES:
                return NOT  # np.random.rand(1).item() reads no tensor
            if qualname == "torch.device" and node.args and isinstance(node.args[0].value, cst.SimpleString):
                return CPU if _names_cpu(node.args[0].value) else NOT
            if self._helper_kind is not None and not qualname.startswith("torch."):
                helper = self._helper_kind(node, self.kind)  # `is_known(labels)` of the project's utils
                if helper is not None:
                    return helper
            return torch_call_kind(qualname, node, self.kind)
        if type(func) is cst.Name and self._name_kind(func.value) == MODULE:
            # criterion(logits, y): a layer or loss gives a tensor where its inputs are
            kinds = {self.kind(arg.value) for arg in node.args} & {TENSOR, HOST}
            return HOST if kinds == {HOST} else TENSOR
        if not isinstance(func, cst.Attribute):
            return self._helper_kind(node, self.kind) if self._helper_kind is not None else None
        method = func.attr.value
        owner = func.value
        if isinstance(owner, cst.Name) and owner.value == "self":
            # self.conv(x): a submodule (or helper) applied to tensors gives a tensor where they are.
            return passed_through(self.kind(arg.value) for arg in node.args)
        owner_kind = self.kind(owner)
        if owner_kind == BATCH and method in DEVICE_METHODS:
            return BATCH
        if owner_kind is None and method in DEVICE_METHODS and type(owner) is cst.Subscript and not self._casts(node):
            return TENSOR  # batch["frame"].to(device): an entry of a batch moved to the device
        if owner_kind is None and (
            method in TENSOR_RESULT_METHODS or method in ARRAY_MEMBERS and _torch_keywords(node)
        ):
            return TENSOR  # (labels == c).type_as(probas), labels.sum(dim=2): only a tensor's method
        if (method in _TO_PYTHON_METHODS or method == "type") and not node.args or method == "astype":
            return NOT  # `x.cpu().numpy()`, `x.tolist()`, `x.type()` (a string), numpy's `a.astype(int)`: no tensor
        if owner_kind not in (TENSOR, HOST):
            return None
        if method in _NON_TENSOR_METHODS or method.startswith(("is_", "has_")):  # x.is_pinned(), adj.has_value()
            return NOT
        if method in _HOST_METHODS:
            return HOST
        if method in DEVICE_METHODS:
            if self._casts(node):
                return owner_kind  # x.to(torch.float16), x.to(dtype): a cast stays where it is
            moves_to_cpu = node.args and self.kind(node.args[0].value) == CPU
            return HOST if moves_to_cpu else TENSOR
        return owner_kind

    def _casts(self, call: cst.Call) -> bool:
        """``x.to(torch.float16)``, ``x.to(dtype)``, ``x.to(dtype=t.dtype)``: a cast, no move."""
        return method_call(call, "to") is not None and bool(call.args) and all(
            arg.keyword.value == "dtype" if arg.keyword is not None else is_dtype(arg.value, self._qualname)
            for arg in call.args
        )

    def _attribute_kind(self, node: cst.Attribute) -> Optional[str]:
        owner_kind = self.kind(node.value)
        if owner_kind is None and node.attr.value in _MODEL_OUTPUT_TENSORS:
            return TENSOR
        if owner_kind not in (TENSOR, HOST):
            return None
        if node.attr.value in _NON_TENSOR_ATTRS:
            return NOT
        if node.attr.value in _TENSOR_ATTRS:
            return owner_kind
        return None


def _torch_keywords(call: cst.Call) -> bool:
    """Does ``call`` pass a keyword only torch's array methods take (``dim=``, ``keepdim=``;
    numpy's and pandas' say ``axis=`` and ``keepdims=``)?"""
    return any(arg.keyword is not None and arg.keyword.value in _TORCH_KEYWORDS for arg in call.args)


# Expressions that build a value that is no tensor (as do strings): literals, displays,
# comprehensions, lambdas.
_LITERALS = frozenset({
    cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp, cst.Integer, cst.Float,
    cst.Lambda,
})


def is_dtype(node: cst.BaseExpression, qualname: Callable) -> bool:
    """``torch.float16``, or a name or attribute called ``dtype`` (``x.dtype``, ``self.dtype``)."""
    name = qualname(node) or dotted_name(node) or ""
    return name in DTYPES or name.rsplit(".", 1)[-1] == "dtype"


def _names_cpu(string: cst.SimpleString) -> bool:
    """``"cpu"``, ``'cpu:0'`` (read from the literal's text: evaluating it costs a compile)."""
    return string.value.lstrip("rRbBuU").lstrip("'\"").startswith("cpu")


UNBOUND = "unbound"  # a name's kind before its first binding


def merge_kinds(kinds) -> Optional[str]:
    """The kind of a value that is one of ``kinds`` depending on the path taken."""
    known = [kind for kind in kinds if kind != UNBOUND]
    if not known:
        return None
    if all(kind == known[0] for kind in known):
        return known[0]
    if all(kind in (TENSOR, HOST) for kind in known):
        return TENSOR  # on the host on one path only: the device is unknown
    return None


_SEQUENCE_DISPLAYS = (cst.List, cst.Tuple, cst.ListComp)


def _combine(left: Optional[str], right: Optional[str]) -> Optional[str]:
    if TENSOR in (left, right):
        return TENSOR
    if HOST in (left, right):
        return HOST
    return None


# A tensor's in-place operations (numpy arrays and modules have none): `exp_avg.mul_(beta1)`
# holds a tensor and returns it.
_IN_PLACE = frozenset(
    "add_ sub_ mul_ div_ addcdiv_ addcmul_ pow_ sqrt_ exp_ log_ neg_ abs_ lerp_ copy_ fill_ zero_ uniform_ "
    "normal_ clamp_ clamp_min_ clamp_max_ masked_fill_ scatter_ scatter_add_ index_add_ index_put_".split()
)
# Members that only torch tensors have (numpy arrays, lists and numbers lack them): a name
# used with one holds a tensor.
TORCH_ONLY_MEMBERS = _IN_PLACE | frozenset(
    "backward detach cpu cuda numpy requires_grad grad grad_fn device is_cuda unsqueeze permute contiguous "
    "masked_fill new_zeros new_ones new_empty new_full new_tensor type_as softmax log_softmax "
    "float half long bool to expand expand_as repeat_interleave numel data_ptr isfinite isnan isinf "
    "masked_select index_select topk clamp sigmoid unbind narrow logsumexp nelement "
    "bincount count_nonzero gather scatter scatter_add index_add".split()
)
# Methods of TORCH_ONLY_MEMBERS that return a tensor and that a module lacks (`model.float()`
# is a module), and `unique` (numpy arrays have no such method; pandas' does not run in model
# code): whatever they are called on, the result is a tensor.
TENSOR_RESULT_METHODS = _IN_PLACE | frozenset(
    "detach unsqueeze permute contiguous masked_fill new_zeros new_ones new_empty new_full new_tensor type_as "
    "softmax log_softmax expand_as repeat_interleave masked_select index_select clamp sigmoid narrow "
    "logsumexp unique".split()
)
# torch functions whose positional arguments are not (all) tensors: sequences, data, sizes.
NOT_TENSOR_ARGUMENTS = frozenset(
    "cat concat concatenate stack hstack vstack dstack column_stack row_stack broadcast_tensors meshgrid "
    "block_diag cartesian_prod einsum tensor as_tensor asarray from_numpy is_tensor numel save load".split()
)


# Attributes and methods that only tensors have (a list of tensors has none of them).
TENSOR_ONLY_MEMBERS = frozenset(
    "shape size dim ndim dtype device view reshape permute transpose unsqueeze squeeze flatten "
    "contiguous float half long bool detach clone numel masked_fill sum mean to expand "
    "new_zeros new_ones new_empty new_full new_tensor matmul norm softmax abs backward".split()
)


# Methods whose call shows the receiver is a tensor (Python lists, numbers and strings lack them).
# Reductions and searches that only arrays have (a list, number or string has none of them).
ARRAY_REDUCTIONS = frozenset("any all max min amax amin argmax argmin nonzero unique prod std var".split())
ARRAY_MEMBERS = TENSOR_ONLY_MEMBERS | ARRAY_REDUCTIONS  # members that show an array: x.shape, x.max()
TENSOR_METHODS = ARRAY_MEMBERS | frozenset("isnan isfinite item tolist cpu numpy".split())


def dimension_source(node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The value, of any kind, whose size ``node`` is: ``t.shape[i]``, ``t.size(i)``, ``len(t)``."""
    owner: Optional[cst.BaseExpression] = None
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape":
        owner = node.value.value
    elif isinstance(node, cst.Call) and len(node.args) == 1 and not node.args[0].star:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "size":
            owner = func.value
        elif isinstance(func, cst.Name) and func.value == "len":
            owner = node.args[0].value
    return owner


def dimension_index(node: Optional[cst.BaseExpression]) -> Optional[int]:
    """The dimension a size expression reads: ``k`` of ``t.shape[k]`` and ``t.size(k)``, 0 of ``len(t)``."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len":
        return 0
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        index = node.slice[0].slice.value
    elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and len(node.args) == 1:
        index = node.args[0].value
    else:
        return None
    return int(index.value) if isinstance(index, cst.Integer) else None


def shape_source(node: cst.BaseExpression, kind: Optional[Callable] = None) -> Optional[cst.BaseExpression]:
    """The tensor of ``t.shape`` / ``t.size()`` (a whole shape, as unpacked by ``b, c = t.shape``;
    without ``kind``, the value of any kind whose shape it is)."""
    if isinstance(node, cst.Attribute) and node.attr.value == "shape":
        owner = node.value
    elif isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute) and node.func.attr.value == "size":
        owner = node.func.value
    else:
        return None
    return owner if kind is None or kind(owner) in (TENSOR, HOST) else None


# Comparisons whose result is a plain Python bool, even between tensors.
IDENTITY_OPS = (cst.Is, cst.IsNot, cst.In, cst.NotIn)


def _comparison_kind(inference: TensorInference, node: cst.Comparison) -> Optional[str]:
    if any(isinstance(target.operator, IDENTITY_OPS) for target in node.comparisons):
        return NOT  # `x is None`, `k in d`: plain Python booleans
    operands = comparison_operands(node)
    if any(isinstance(operand, cst.BaseString) for operand in operands):
        return NOT  # `mode == "train"`: no tensor is compared with a string
    result = None
    for operand in operands:
        result = _combine(result, inference.kind(operand))
    return result
