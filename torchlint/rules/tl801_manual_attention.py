"""TL801 manual-attention: softmax(q @ k^T) @ v written by hand where SDPA computes the same."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from torchlint.rules.base import Invalid, Rule, Valid
from torchlint.syntax import dotted_name, is_name, keyword, method_call, positional
from torchlint.walker import iter_children

_SOFTMAX = frozenset({"torch.softmax", "torch.nn.functional.softmax", "torch.special.softmax"})
_PRODUCTS = frozenset({"torch.matmul", "torch.bmm"})
_CASTS = frozenset({"float", "half", "bfloat16", "to", "type", "type_as", "contiguous"})
# Steps between q @ k^T and the softmax that an `attn_mask` or `scale` carries.
_SCORE_METHODS = frozenset({"masked_fill", "masked_fill_", "add", "add_", "mul", "mul_", "div", "div_"}) | _CASTS
_BIAS_WORDS = frozenset({"pos", "bias", "mask", "position", "positional"})
_METADATA = frozenset({"dtype", "shape", "device", "size", "ndim", "dim"})
_SHAPED_LIKE = frozenset({"expand_as", "view_as", "reshape_as", "type_as"})  # read their argument's shape or dtype
_WEIGHT_WORDS = frozenset({"weights", "attn", "attention", "attentions", "attns"})
_ASKING_WORDS = frozenset({"need", "output", "return", "save", "store", "keep", "vis", "visualize"})
_TRANSPARENT_AUG = (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign)
_Path = Tuple[Tuple[int, int], ...]  # (id of an `if`, id of the branch taken) from the outside in


@dataclass
class _Binding:
    order: int
    value: Optional[cst.BaseExpression]  # None: unknown, or an augmented step when `step`
    path: _Path
    step: bool = False  # `name += bias`, `name *= scale`


@dataclass
class _Attention:
    """A softmax over q @ k^T whose weights are being followed to the value product."""

    call: cst.Call
    function: cst.CSTNode
    dim: int
    weights: Dict[str, Tuple[bool, _Path]] = field(default_factory=dict)  # name -> (held transposed, where bound)
    pending: Dict[int, Tuple[str, bool]] = field(default_factory=dict)  # id(Assign) -> the name it binds
    scores: Set[str] = field(default_factory=set)  # names of the scores, which must not be read again
    products: int = 0
    spoiled: bool = False


def _reads_values(node: cst.CSTNode, name: str) -> bool:
    """Does ``node`` read the values of ``name``, not only its shape, device or dtype
    (``torch.eye(dots.shape[-1], device=dots.device)``, ``mask.expand_as(dots)``)?"""
    stack = [node]
    while stack:
        inner = stack.pop()
        if is_name(inner, name):
            return True
        if isinstance(inner, cst.Attribute) and inner.attr.value in _METADATA:
            continue
        shaped = method_call(inner, *_SHAPED_LIKE)
        stack.extend([shaped.value] if shaped is not None else iter_children(inner))
    return False


def _int(node: Optional[cst.BaseExpression]) -> Optional[int]:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _int(node.expression)
        return None if inner is None else -inner
    return int(node.value) if isinstance(node, cst.Integer) else None


def _from_end(dim: int, product: cst.BaseExpression) -> int:
    """The softmax's ``dim`` counted from the end where the product shows the scores' rank:
    ``q @ k.transpose(2, 3)`` (also ``torch.matmul``) swaps the key's last two dimensions, so
    the scores have four and ``dim=3`` is the last one."""
    if dim < 0:
        return dim
    if isinstance(product, cst.BinaryOperation):
        key: Optional[cst.BaseExpression] = product.right
    else:
        args = positional(product) if isinstance(product, cst.Call) else []
        key = args[-1].value if args else None
    method = method_call(key, "transpose") if key is not None else None
    swapped = [_int(arg.value) for arg in positional(key)] if method is not None else []
    if len(swapped) == 2 and None not in swapped and min(swapped) >= 0 and max(swapped) == min(swapped) + 1 == dim:
        return -1
    return dim


def _words(name: Optional[str]) -> Set[str]:
    return set(name.rsplit(".", 1)[-1].lower().split("_")) if name else set()


def _einsum_spec(call: cst.Call) -> Optional[Tuple[List[str], str]]:
    """The operands' and the output's subscripts of ``torch.einsum("..", a, b)``."""
    args = positional(call)
    if len(args) != 3 or not isinstance(args[0].value, cst.SimpleString):
        return None
    spec = str(args[0].value.evaluated_value).replace(" ", "")
    if "->" not in spec:
        return None
    inputs, output = spec.split("->")
    return inputs.split(","), output


def _contracted(subscripts: str, output: str, dim: int) -> bool:
    """Does an einsum sum over dimension ``dim`` of the operand with these ``subscripts``?"""
    if "..." in subscripts:
        if dim >= 0:
            return False
        subscripts = subscripts.replace("...", "")
    if not -len(subscripts) <= dim < len(subscripts):
        return False
    return subscripts[dim] not in output


def _exclusive(one: _Path, other: _Path) -> bool:
    """Are the two places in different branches of the same ``if``?"""
    taken = dict(one)
    return any(taken.get(node, branch) != branch for node, branch in other)


def _fused_branch(test: cst.BaseExpression) -> Optional[bool]:
    """For ``if test:`` choosing between a fused path and a fallback: True when the body is
    the fused one (``hasattr(F, "scaled_dot_product_attention")``, ``self.fused_attn``),
    False when the ``else`` is, None when the test says nothing about it."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _fused_branch(test.expression)
        return None if inner is None else not inner
    if isinstance(test, cst.Call) and dotted_name(test.func) == "hasattr":
        return any(
            isinstance(arg.value, cst.SimpleString) and "scaled_dot_product_attention" in arg.value.value
            for arg in test.args
        ) or None
    return True if "fused" in _words(dotted_name(test)) else None


def _stops(statement: cst.BaseSmallStatement) -> bool:
    """``raise ...`` or ``assert False``: nothing after it in the block runs."""
    if isinstance(statement, cst.Assert):
        return isinstance(statement.test, cst.Name) and statement.test.value == "False"
    return isinstance(statement, cst.Raise)


def _weights_flag(test: cst.BaseExpression) -> bool:
    """``if need_weights:``, ``if self.save_attn:``, ``output_attentions and ...``."""
    if isinstance(test, cst.BooleanOperation):
        return _weights_flag(test.left) or _weights_flag(test.right)
    words = _words(dotted_name(test))
    return not _WEIGHT_WORDS.isdisjoint(words) and not _ASKING_WORDS.isdisjoint(words)


class ManualAttention(Rule):
    code = "TL801"
    name = "manual-attention"
    triggers = ("softmax", "Softmax")
    message = (
        "attention written as softmax(q @ k^T) @ v materialises the (L x L) weights; "
        "use F.scaled_dot_product_attention (fused kernels)"
    )
    what = (
        "Finds a softmax (`torch.softmax`, `F.softmax`, `.softmax(dim=-1)`, an `nn.Softmax(dim=-1)` "
        "attribute or one called where it is built, `nn.Softmax(dim=-1)(scores)`) of a product of two tensors (`q @ k.transpose(-2, -1)`, "
        "`k.mT`, `torch.matmul`, `torch.bmm`, a two-operand `torch.einsum`; with `k.transpose(2, 3)` the "
        "last dimension may be named from the front, `dim=3`), scaled by a multiplication "
        "or division, with an additive mask or bias, `masked_fill` or a cast before the softmax, "
        "whose weights, after an optional dropout or cast, are multiplied once by the values "
        "(`@`, `matmul`, `bmm`, `einsum`) over the dimension the softmax normalised (the last one "
        "for `attn @ v`, the one before it for `v @ attn` or `torch.bmm(v, attn)`, the other way round "
        "for weights transposed, `attn.permute(0, 2, 1)`). The steps are "
        "followed through assignments in the same function (`attn = q @ k.mT`, `attn *= scale`, "
        "`attn = attn.softmax(-1)`, `attn = self.drop(attn)`, `out = attn @ v`), also into both "
        "branches of an `if`/`else` that each assign the scores."
    )
    why = (
        "Written by hand, attention runs as separate kernels (the product, scaling, masking, softmax, "
        "dropout, the second product), each reading and writing the full (L x S) score matrix per "
        "head, and autograd keeps it for the backward pass: memory and time grow with the square of "
        "the sequence length. `F.scaled_dot_product_attention` computes the same result with fused "
        "kernels (flash or memory-efficient attention on GPUs, a fused kernel on the CPU) that never "
        "store the whole matrix."
    )
    example = Invalid("""
        import math
        import torch
        from torch import nn

        class SelfAttention(nn.Module):
            def forward(self, q, k, v, mask):  # (batch, heads, length, head_dim)
                scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                scores = scores.masked_fill(~mask, float("-inf"))
                attn = torch.softmax(scores, dim=-1)  # expect: TL801
                return self.dropout(attn) @ v
    """)
    use_instead = Valid("""
        import torch.nn.functional as F
        from torch import nn

        class SelfAttention(nn.Module):
            def forward(self, q, k, v, mask):  # mask: True where attention is allowed
                return F.scaled_dot_product_attention(
                    q, k, v, attn_mask=mask, dropout_p=self.dropout.p if self.training else 0.0
                )
    """)
    fix_safety = (
        "No fix. An exact rewrite needs what one file does not show: that q, k and v have the "
        "layout SDPA takes ((..., L, E), (..., S, E), (..., S, Ev); a product written `q^T @ k` or "
        "`v @ attn^T` needs transposes), that the scale is the one applied (`scale=`, 1 where none "
        "is), that a mask is boolean with True meaning keep (`masked_fill(~m, -inf)` is "
        "`attn_mask=m`; `masked_fill(m, -inf)` needs `~m`) or an additive float bias (including "
        "relative position biases), and that the dropout module's `p` applies only in training "
        "(`dropout_p=self.drop.p if self.training else 0.0`). Not reported when the weights are "
        "used otherwise (returned, stored on `self`, passed to a hook, multiplied twice), except "
        "under a flag that asks for them (`if need_weights:`, `if self.save_attn:`); when the "
        "scores are read again (one score matrix for both directions) or masked by a mask made from "
        "themselves (top-k sparse attention, `dots.masked_fill(dots < top[..., -1:], -inf)`: the mask needs "
        "the whole matrix); for a softmax over another "
        "dimension than the one the values are summed over; for scores passed through anything "
        "SDPA cannot carry (`tanh` soft-capping, a margin in the denominator, a flattened map); for "
        "softmaxes not over a product (logits, attention pooling over a linear score); and in the "
        "fallback branch of code that already calls SDPA (`if hasattr(F, "
        "\"scaled_dot_product_attention\")`, `if self.fused_attn:`) or after `assert False`."
    )
    valid = (
        Valid("""
            import torch
            from torch import nn

            class TopKAttention(nn.Module):
                def forward(self, q, k, v):
                    dots = torch.einsum("b h i d, b h j d -> b h i j", q, k) * q.shape[-1] ** -0.5
                    top, _ = dots.topk(self.topk, dim=-1)
                    mask = dots < top[..., -1:]  # from the scores themselves: the matrix must exist
                    attn = dots.masked_fill(mask, float("-inf")).softmax(dim=-1)
                    return torch.einsum("b h i j, b h j d -> b h i d", attn, v)
        """),
        Valid("""
            import torch
            from torch import nn

            class Lemmatizer(nn.Module):
                def forward(self, encoded, output, values):
                    # torch.transpose(t, 1, 2): the function's own first argument is no dimension
                    coeff = torch.softmax(torch.matmul(encoded, torch.transpose(output, 1, 2)), dim=1)
                    return torch.matmul(values, coeff)
        """),
        Valid("""
            from torch import nn

            class Gated(nn.Module):
                def forward(self, q, k, v, x):
                    if self.use_attention:
                        scores = q @ k
                    else:
                        scores = self.gate(x)  # a gate's logits, no product of two tensors
                    return scores.softmax(dim=-1) @ v
        """),
        Valid("""
            import torch
            class Attention(nn.Module):
                def forward(self, q, k, v):
                    attn = (q @ k.transpose(-2, -1)) * self.scale
                    attn = attn.softmax(dim=-1)
                    out = attn @ v
                    return out, attn
        """),
        Valid("""
            import torch
            class Attention(nn.Module):
                def forward(self, q, k, v):
                    attn = torch.softmax(q @ k.mT * self.scale, dim=-1)
                    self.attn_map = attn
                    return attn @ v
        """),
        Valid("""
            import torch
            class Attention(nn.Module):
                def forward(self, q, k, v):
                    attn = torch.softmax(q @ k.mT, dim=-1)
                    for hook in self.hooks:
                        hook(attn)
                    return attn @ v
        """),
        Valid("""
            import torch.nn.functional as F
            class Classifier(nn.Module):
                def forward(self, x):
                    probs = F.softmax(self.head(x), dim=-1)
                    return probs @ self.class_embeddings
        """),
        Valid("""
            import torch
            class Attention(nn.Module):
                def forward(self, q, k, v):
                    attn = torch.softmax(q @ k.transpose(-2, -1), dim=1)
                    return attn @ v
        """),
        Valid("""
            import torch.nn.functional as F
            class Attention(nn.Module):
                def forward(self, q, k, v):
                    return F.scaled_dot_product_attention(q, k, v, scale=self.scale)
        """),
        Valid("""
            import torch
            import torch.nn.functional as F
            class Attention(nn.Module):
                def forward(self, q, k, v):
                    if hasattr(F, "scaled_dot_product_attention"):
                        return F.scaled_dot_product_attention(q, k, v)
                    else:
                        attn = (q @ k.transpose(-2, -1) * self.scale).softmax(dim=-1)
                        return attn @ v
        """),
        Valid("""
            import torch
            import torch.nn.functional as F
            class Attention(nn.Module):
                def forward(self, q, k, v):
                    if self.fused_attn:
                        x = F.scaled_dot_product_attention(q, k, v)
                    else:
                        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
                        x = attn @ v
                    return x
        """),
        Valid("""
            import torch
            class Attention(nn.Module):
                def forward(self, q, k, v):
                    assert False, "only the fused path is supported"
                    attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
                    return attn @ v
        """),
        Valid("""
            import torch
            def prototype_probabilities(queries, prototypes, temperature):
                return torch.softmax(torch.matmul(queries, prototypes.T) / temperature, dim=1)
        """),
        Valid("""
            import torch
            class Gemma(nn.Module):
                def forward(self, q, k, v, mask):
                    scores = torch.matmul(q, k.transpose(2, 3)) * self.scaling
                    if self.softcapping is not None:
                        scores = scores / self.softcapping
                        scores = torch.tanh(scores)
                        scores = scores * self.softcapping
                    scores = scores + mask
                    scores = torch.softmax(scores.float(), dim=-1).type_as(q)
                    return torch.matmul(scores, v)
        """),
        Valid("""
            import torch
            import torch.nn.functional as F
            class CrossAttention(nn.Module):
                def forward(self, a, b, va, vb):
                    sim = torch.einsum("bhid,bhjd->bhij", a, b)
                    attn01 = F.softmax(sim, dim=-1)
                    attn10 = F.softmax(sim.transpose(-2, -1), dim=-1)
                    m0 = torch.einsum("bhij,bhjd->bhid", attn01, vb)
                    m1 = torch.einsum("bhji,bhjd->bhid", attn10.transpose(-2, -1), va)
                    return m0, m1
        """),
        Valid("""
            import torch
            class Manet(nn.Module):
                def forward(self, q, k, v):
                    b = q.shape[0]
                    energy = torch.bmm(q, k)
                    attn = torch.softmax(energy.view(b, -1), dim=-1).view_as(energy)
                    return torch.bmm(v, attn)
        """),
        Valid("""
            import torch
            class Matcher(nn.Module):
                def forward(self, f0, f1):
                    sim = torch.einsum("nlc,nsc->nls", f0, f1) / self.temperature
                    conf = torch.softmax(sim, 1) * torch.softmax(sim, 2)
                    return conf
        """),
        Valid("""
            import torch
            class Pool(nn.Module):
                def forward(self, x):
                    weights = torch.softmax(self.score(x), dim=1)
                    return (weights * x).sum(dim=1)
        """),
        Valid("""
            import torch
            class Tagger(nn.Module):
                def forward(self, x):
                    probs = torch.softmax(x @ self.weight.T, dim=-1)
                    return probs
        """),
    )
    invalid = (
        Invalid("""
            import torch
            from torch import nn

            class Attention(nn.Module):
                def forward(self, q, k, v, mask=None):
                    attn = (q * self.scale) @ k.transpose(-2, -1)
                    if mask is not None:  # a padding mask shaped like the scores, not made from them
                        attn = attn.masked_fill(mask[:, None, None, :].expand_as(attn), float("-inf"))
                    attn = attn.softmax(dim=-1)  # expect: TL801
                    return attn @ v
        """),
        Invalid("""
            import torch
            from torch import nn

            class AttnBlock(nn.Module):
                def forward(self, x):
                    q, k, v = self.q(x), self.k(x), self.v(x)
                    b, c, h, w = q.shape
                    q = q.reshape(b, c, h * w).permute(0, 2, 1)  # b, hw, c
                    w_ = torch.bmm(q, k.reshape(b, c, h * w)) * (int(c) ** -0.5)
                    w_ = torch.nn.functional.softmax(w_, dim=2)  # expect: TL801
                    w_ = w_.permute(0, 2, 1)  # weights of the keys along dim 1
                    out = torch.bmm(v.reshape(b, c, h * w), w_)
                    return x + self.proj_out(out.reshape(b, c, h, w))
        """),
        Invalid("""
            import torch
            from torch import nn

            class Attention(nn.Module):
                def __init__(self, dim, heads, dropout=0.0):
                    super().__init__()
                    self.scale = (dim // heads) ** -0.5
                    self.attend = nn.Softmax(dim=-1)  # kept under any name
                    self.window_attend = nn.Sequential(nn.Softmax(dim=-1), nn.Dropout(dropout))

                def forward(self, q, k, v):
                    dots = torch.matmul(q, k.transpose(-1, -2)) * self.scale
                    attn = self.attend(dots)  # expect: TL801
                    return torch.matmul(attn, v)

                def windows(self, q, k, v):
                    attn = self.window_attend(q @ k.transpose(-2, -1) * self.scale)  # expect: TL801
                    return attn @ v
        """),
        Invalid("""
            from torch import nn

            class BottleneckAttn(nn.Module):
                def forward(self, q, k, v):
                    if self.scale_pos_embed:
                        attn = (q @ k + self.pos_embed(q)) * self.scale
                    else:
                        attn = (q @ k) * self.scale + self.pos_embed(q)
                    attn = attn.softmax(dim=-1)  # expect: TL801
                    return attn @ v
        """),
        Invalid("""
            import torch
            import torch.nn.functional as F
            from torch import nn

            class StyleAttention(nn.Module):
                def forward(self, queries, keys, values):  # (heads, batch, length, head_dim)
                    scores = torch.matmul(queries, keys.transpose(2, 3)) / self.key_dim**0.5
                    scores = F.softmax(scores, dim=3)  # expect: TL801
                    return torch.matmul(scores, values)
        """),
        Invalid("""
            import torch
            class Attention(nn.Module):
                def forward(self, x):
                    q, k, v = self.qkv(x).unbind(0)
                    attn = q @ k.transpose(-2, -1)
                    attn = attn * self.scale
                    attn = attn.softmax(dim=-1)  # expect: TL801
                    attn = self.attn_drop(attn)
                    return (attn @ v).transpose(1, 2)
        """),
        Invalid("""
            import torch
            import torch.nn.functional as F
            def attention(q, k, v, mask, p, training):
                scores = torch.matmul(q, k.transpose(-2, -1)) / q.size(-1) ** 0.5
                scores = scores.masked_fill(mask == 0, -1e9)
                weights = F.dropout(F.softmax(scores, dim=-1), p, training)  # expect: TL801
                return torch.matmul(weights, v)
        """),
        Invalid("""
            import torch
            class Window(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.softmax = nn.Softmax(dim=-1)
                def forward(self, q, k, v, bias, mask):
                    attn = q @ k.transpose(-2, -1)
                    attn = attn + bias
                    if mask is not None:
                        attn = attn + mask
                        attn = self.softmax(attn)  # expect: TL801
                    else:
                        attn = self.softmax(attn)  # expect: TL801
                    attn = self.attn_drop(attn)
                    return attn @ v
        """),
        Invalid("""
            import math
            import torch
            from torch import nn

            class FilterMixerLayer(nn.Module):
                def forward(self, q, k, v, mask):
                    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.size(-1))
                    probs = nn.Softmax(dim=-1)(scores + mask)  # expect: TL801
                    return torch.matmul(self.dropout(probs), v)
        """),
        Invalid("""
            import torch
            class Vit(nn.Module):
                def forward(self, q, k, v):
                    att = torch.einsum("bhqd, bhkd -> bhqk", q, k) * self.scale
                    att = att.softmax(dim=-1)  # expect: TL801
                    return torch.einsum("bhqk,bhkd->bhqd", att, v)
        """),
        Invalid("""
            import torch
            class MHA(nn.Module):
                def forward(self, q, k, v, attn_mask, need_weights):
                    w = torch.bmm(q, k.transpose(1, 2))
                    w += attn_mask
                    w_float = torch.softmax(w, dim=-1)  # expect: TL801
                    w = w_float.type_as(w)
                    out = torch.bmm(self.dropout(w), v)
                    weights = None
                    if need_weights:
                        weights = w_float.mean(dim=0)
                    return out, weights
        """),
        Invalid("""
            import torch
            class PSA(nn.Module):
                def forward(self, q, k, v):
                    attn = ((q * self.scale).transpose(-2, -1) @ k).softmax(dim=-1)  # expect: TL801
                    return v @ attn.transpose(-2, -1)
        """),
        Invalid("""
            import torch
            import torch.nn.functional as F
            class SelfAttention2d(nn.Module):
                def forward(self, f, g, h):
                    beta = F.softmax(torch.bmm(f.transpose(1, 2), g), dim=1)  # expect: TL801
                    return torch.bmm(h, beta)
        """),
    )

    def __init__(self, ctx, sink) -> None:
        super().__init__(ctx, sink)
        self._history: Dict[Tuple[int, str], List[_Binding]] = {}  # (id(function), name) -> bindings
        self._order = 0
        self._open: List[_Attention] = []
        self._ifs: List[Tuple[cst.If, int]] = []  # the enclosing `if` statements and their depths
        self._softmax_modules: Optional[bool] = None  # does the file build `nn.Softmax` modules

    # ---- the softmax -------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        found = self._softmax(node)
        if found is None:
            return
        scores, dim = found
        ctx = self.ctx
        if ctx.in_definition() or ctx.in_rare_path() or ctx.in_export_branch() or self._fallback():
            return
        product = self._reached_product(scores, self._order + 1, self._path(), 0)
        if product is None:
            return
        attention = _Attention(node, ctx.scope.function.node, _from_end(dim, product))
        attention.scores = {name.value for name in self._operands(scores)}
        self._follow(attention, node, ctx.ancestors, False)
        if not attention.spoiled:
            self._open.append(attention)

    def _softmax(self, node: cst.Call) -> Optional[Tuple[cst.BaseExpression, int]]:
        """The input and the dimension of a softmax call (every spelling ends in "softmax", or is
        an ``nn.Softmax`` module called: ``self.softmax(scores)``, ``nn.Softmax(dim=-1)(scores)``)."""
        func = node.func
        called = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        held = isinstance(func, cst.Attribute) and dotted_name(func.value) == "self"
        if "softmax" not in called.lower() and not isinstance(func, cst.Call) and not (held and self._holds_softmax()):
            return None
        args = positional(node)
        module = func if isinstance(func, cst.Call) else None
        if held:  # self.softmax(scores), self.attend(scores) of `self.attend = nn.Softmax(dim=-1)`
            module = self.ctx.attribute_value(func.attr.value)
            if module is None:
                return None
        name = self.ctx.qualname(func) if module is None else None
        dim = keyword(node, "dim")
        if module is not None:
            module = self._softmax_module(module)
            if len(args) != 1 or module is None:
                return None
            dim = keyword(module, "dim")
            source, dim_value = args[0].value, dim.value if dim else next((a.value for a in positional(module)), None)
        elif name in _SOFTMAX or (name is None and dotted_name(func) in ("F.softmax", "torch.softmax")):
            if not args:
                return None
            source, dim_value = args[0].value, dim.value if dim else (args[1].value if len(args) > 1 else None)
        elif method_call(node, "softmax") is not None and name is None:
            source, dim_value = func.value, dim.value if dim else (args[0].value if args else None)
        else:
            return None
        value = _int(dim_value)
        return None if value is None else (source, value)

    def _holds_softmax(self) -> bool:
        """Does the file build an ``nn.Softmax`` module (which may be kept under any name)?"""
        if self._softmax_modules is None:
            self._softmax_modules = "Softmax(" in self.ctx.text
        return self._softmax_modules

    def _softmax_module(self, module: cst.BaseExpression) -> Optional[cst.Call]:
        """The ``nn.Softmax(...)`` call ``module`` is, or starts with (``nn.Sequential(nn.Softmax(dim=-1),
        nn.Dropout(p))``: the weights' dropout, which the fused kernel also applies)."""
        if not isinstance(module, cst.Call):
            return None
        name = (self.ctx.qualname(module.func) or dotted_name(module.func) or "").rsplit(".", 1)[-1]
        if name == "Sequential" and module.args:
            return self._softmax_module(module.args[0].value)
        return module if name == "Softmax" else None

    def _fallback(self) -> bool:
        """In the branch that runs when the fused path does not, or after ``assert False``."""
        ancestors = self.ctx.ancestors
        for index, node in enumerate(ancestors[:-1]):
            branch = ancestors[index + 1]
            if isinstance(node, cst.If) and (branch is node.body or branch is node.orelse):
                fused = _fused_branch(node.test)
                if fused is not None and fused != (branch is node.body):
                    return True
            if isinstance(node, cst.IndentedBlock):
                for statement in node.body:
                    if statement is branch:
                        break
                    if isinstance(statement, cst.SimpleStatementLine) and any(
                        _stops(small) for small in statement.body
                    ):
                        return True
        return False

    # ---- the scores: back from the softmax to q @ k^T ----------------------------------------
    def _product(self, node: cst.BaseExpression) -> Optional[str]:
        """"mm", "bmm" or "einsum" for a product of two tensors."""
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.MatrixMultiply):
            return "mm"
        if not isinstance(node, cst.Call):
            return None
        name = self.ctx.qualname(node.func)
        if name in _PRODUCTS and len(positional(node)) == 2:
            return "bmm" if name == "torch.bmm" else "mm"
        if name == "torch.einsum" and _einsum_spec(node) is not None:
            return "einsum"
        method = method_call(node, "matmul", "bmm")
        if method is not None and name is None and len(positional(node)) == 1:
            return "bmm" if method.attr.value == "bmm" else "mm"
        return None

    def _operands(self, node: cst.BaseExpression) -> List[cst.Name]:
        """The names a chain of scoring steps starts from (``attn`` in ``attn * s + bias``)."""
        if isinstance(node, cst.Name):
            return [node]
        return [name for inner in self._inputs(node) for name in self._operands(inner)]

    def _reached_product(
        self, node: cst.BaseExpression, order: int, path: _Path, depth: int
    ) -> Optional[cst.BaseExpression]:
        """The product of two tensors the scores ``node`` come from, if they come from one."""
        if depth > 16:
            return None
        if self._product(node) is not None:
            return node
        if not isinstance(node, cst.Name):
            return next(
                (found for inner in self._inputs(node)
                 if (found := self._reached_product(inner, order, path, depth + 1)) is not None),
                None,
            )
        products = [
            self._reached_product(found.value, found.order, found.path, depth + 1)
            for found in self._sources(node.value, order, path)
        ]
        return products[0] if products and None not in products else None

    def _inputs(self, node: cst.BaseExpression) -> List[cst.BaseExpression]:
        """What a step between the product and the softmax works on: scaling, an additive
        mask or bias (also from a helper, ``add_rel_pos(attn, q)``), ``masked_fill``, a cast,
        a reshape that keeps the rows (``view(b, h, n, n)``, not ``view(b, -1)``)."""
        if isinstance(node, cst.BinaryOperation):
            if isinstance(node.operator, (cst.Multiply, cst.Add)):
                return [node.left, node.right]
            return [node.left] if isinstance(node.operator, (cst.Divide, cst.Subtract)) else []
        method = method_call(node, *_SCORE_METHODS, "view", "reshape")
        if method is not None and self._masked_by_itself(node, method):
            return []  # top-k sparse attention: the mask needs the whole score matrix
        if method is not None:
            args = positional(node)
            flattens = method.attr.value in ("view", "reshape") and (not args or _int(args[-1].value) == -1)
            return [] if flattens else [method.value]
        if isinstance(node, cst.Call) and not _BIAS_WORDS.isdisjoint(_words(dotted_name(node.func))):
            return [arg.value for arg in positional(node)]
        return []

    def _masked_by_itself(self, call: cst.Call, method: cst.Attribute) -> bool:
        """``dots.masked_fill(mask, -inf)`` of ``mask = dots < dots.topk(k)[0][..., -1:]``: a
        mask computed from the scores it masks (read directly or through the name it is held in)."""
        args = positional(call)
        if not method.attr.value.startswith("masked_fill") or not args or not isinstance(method.value, cst.Name):
            return False
        mask = args[0].value
        held = self.ctx.value_of(mask.value) if isinstance(mask, cst.Name) else None
        return any(_reads_values(part, method.value.value) for part in (mask, held) if part is not None)

    def _source(self, name: str, order: int, path: _Path) -> Optional[_Binding]:
        """The assignment ``name`` was last bound by before ``order``, seen from ``path``:
        assignments in the other branch of an enclosing ``if`` never ran; one in a branch
        that may have run must be a scoring step of the same name (``if mask is not None:
        attn = attn + mask``); ``attn += bias`` is one."""
        for binding in reversed(self._bindings(name)):
            if binding.order >= order:
                continue
            if _exclusive(path, binding.path):
                continue  # the other branch of an `if` around here
            if binding.step:
                continue
            if binding.value is None:
                return None
            if set(binding.path) <= set(path):
                return binding
            if name not in {operand.value for operand in self._operands(binding.value)}:
                return None  # a conditional step that SDPA may not carry (`torch.tanh`)
        return None

    def _sources(self, name: str, order: int, path: _Path) -> List[_Binding]:
        """What ``name`` may hold before ``order``, seen from ``path``: the value ``_source``
        finds, or else the two an ``if``/``else`` assigns, one in each branch (``if
        self.scale_pos_embed: attn = (q @ k + pos) * s`` ... ``else: attn = q @ k * s + pos``)."""
        found = self._source(name, order, path)
        if found is not None:
            return [found]
        bindings = [
            binding for binding in self._bindings(name) if binding.order < order and not binding.step
        ]
        if len(bindings) < 2:
            return []
        first, last = bindings[-2:]
        if first.value is None or last.value is None or len(first.path) != len(last.path) or not first.path:
            return []
        (one, branch), (other, other_branch) = first.path[-1], last.path[-1]
        both_branches = one == other and branch != other_branch and first.path[:-1] == last.path[:-1]
        return [first, last] if both_branches and set(first.path[:-1]) <= set(path) else []

    def _path(self) -> _Path:
        """The branches taken to get here: each enclosing `if` and the part of it we are in."""
        ancestors = self.ctx.ancestors
        return tuple((id(node), id(ancestors[depth + 1])) for node, depth in self._ifs)

    def visit_If(self, node: cst.If) -> None:
        self._ifs.append((node, len(self.ctx.ancestors)))

    def leave_If(self, node: cst.If) -> None:
        self._ifs.pop()

    # ---- the weights: forward from the softmax to the value product ----------------------------------
    def _follow(self, attention: _Attention, node: cst.BaseExpression, ancestors, transposed: bool) -> None:
        """Where the weights ``node`` go: through dropout and casts, into the value product
        (counted), to a name (followed), or anywhere else (the attention is spoiled)."""
        child: cst.CSTNode = node
        index = len(ancestors) - 1
        while index >= 0:
            parent = ancestors[index]
            if isinstance(parent, cst.Attribute) and parent.value is child:
                holder = ancestors[index - 1] if index else None
                if parent.attr.value == "mT":
                    transposed, child, index = not transposed, parent, index - 1
                    continue
                if not isinstance(holder, cst.Call) or holder.func is not parent:
                    break
                method = parent.attr.value
                if method in _CASTS:
                    child, index = holder, index - 2
                    continue
                if method in ("transpose", "permute") and self._flips(holder):
                    transposed, child, index = not transposed, holder, index - 2
                    continue
                if method in ("matmul", "bmm") and self._product(holder):
                    self._count(attention, "bmm" if method == "bmm" else "mm", 0, transposed)
                    return
                break
            if isinstance(parent, cst.Arg) and parent.value is child and parent.keyword is None:
                call = ancestors[index - 1] if index else None
                if not isinstance(call, cst.Call):
                    break
                args = positional(call)
                position = next((i for i, arg in enumerate(args) if arg is parent), -1)
                kind = self._product(call)
                if kind == "einsum":
                    self._count_einsum(attention, call, position - 1, transposed)
                    return
                if kind is not None and position in (0, 1):
                    self._count(attention, kind, position, transposed)
                    return
                func = dotted_name(call.func) or ""
                if position == 0 and (
                    self.ctx.qualname(call.func) == "torch.nn.functional.dropout" or "drop" in func.rsplit(".", 1)[-1]
                ):
                    child, index = call, index - 2
                    continue
                break
            if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.MatrixMultiply):
                self._count(attention, "mm", 0 if parent.left is child else 1, transposed)
                return
            if (
                isinstance(parent, cst.Assign) and parent.value is child and len(parent.targets) == 1
                and isinstance(parent.targets[0].target, cst.Name)
            ):
                attention.pending[id(parent)] = (parent.targets[0].target.value, transposed)
                return
            break
        attention.spoiled = True

    @staticmethod
    def _flips(call: cst.Call) -> bool:
        """``.transpose(-2, -1)`` (or ``(1, 2)`` of a batch of matrices), ``.permute(0, 2, 1)``:
        the last two dimensions swapped."""
        dims = [_int(arg.value) for arg in positional(call)]
        if call.func.attr.value == "permute":
            return len(dims) > 2 and dims == [*range(len(dims) - 2), len(dims) - 1, len(dims) - 2]
        return set(dims) in ({-2, -1}, {1, 2})

    def _count(self, attention: _Attention, kind: str, position: int, transposed: bool) -> None:
        """A value product: the softmax must normalise the dimension it sums over."""
        summed = (-1 if position == 0 else -2) if not transposed else (-2 if position == 0 else -1)
        dim = attention.dim - 3 if kind == "bmm" and attention.dim >= 0 else attention.dim
        attention.products += 1
        attention.spoiled |= dim != summed

    def _count_einsum(self, attention: _Attention, call: cst.Call, operand: int, transposed: bool) -> None:
        inputs, output = _einsum_spec(call)
        attention.products += 1
        attention.spoiled |= transposed or not (0 <= operand < len(inputs)) or not _contracted(
            inputs[operand], output, attention.dim
        )

    def visit_Name(self, node: cst.Name) -> None:
        if not self._open:
            return
        parent = self.ctx.parent
        if (
            isinstance(parent, cst.AssignTarget)
            or (isinstance(parent, cst.Attribute) and (parent.attr is node or parent.attr.value in _METADATA))
            or (isinstance(parent, cst.Arg) and parent.keyword is node)
        ):
            return
        function = self.ctx.scope.function.node
        for attention in self._open:
            if attention.function is not function or attention.spoiled or any(
                ancestor is attention.call for ancestor in self.ctx.ancestors
            ):
                continue
            if node.value in attention.weights:
                if not self._optional_use() and not _exclusive(attention.weights[node.value][1], self._path()):
                    self._follow(attention, node, self.ctx.ancestors, attention.weights[node.value][0])
            elif node.value in attention.scores and not self._optional_use() and method_call(
                self.ctx.ancestors[-2] if len(self.ctx.ancestors) > 1 else None, "type_as"
            ) is None:
                attention.spoiled = True

    def _optional_use(self) -> bool:
        """A use only under a flag that asks for the weights, or in an assertion or error path."""
        if self.ctx.in_rare_path():
            return True
        ancestors = self.ctx.ancestors
        return any(
            isinstance(node, (cst.If, cst.IfExp)) and ancestors[index + 1] is node.body and _weights_flag(node.test)
            for index, node in enumerate(ancestors[:-1])
        )

    # ---- bindings ----------------------------------------------------------------
    def _bindings(self, name: str) -> List[_Binding]:
        """The bindings of ``name`` in the current function so far, oldest first."""
        return self._history.setdefault((id(self.ctx.scope.function.node), name), [])

    def _bind(self, name: str, value: Optional[cst.BaseExpression], step: bool = False) -> None:
        self._order += 1
        self._bindings(name).append(_Binding(self._order, value, self._path(), step))

    def leave_Assign(self, node: cst.Assign) -> None:
        names = [target.target.value for target in node.targets if isinstance(target.target, cst.Name)]
        for name in names:
            self._bind(name, node.value if len(node.targets) == 1 else None)
        for target in node.targets:
            if isinstance(target.target, (cst.Tuple, cst.List)):
                for element in target.target.elements:
                    if isinstance(element.value, cst.Name):
                        self._bind(element.value.value, None)
                        names.append(element.value.value)
        path = self._path()
        for attention in self._open:
            bound = attention.pending.pop(id(node), None)
            for name in names:
                if name in attention.weights and not _exclusive(attention.weights[name][1], path):
                    del attention.weights[name]  # rebound, unless in the other branch of an `if`
                attention.scores.discard(name)
            if bound is not None:
                attention.weights[bound[0]] = (bound[1], path)

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            name = node.target.value
            self._bind(name, None, isinstance(node.operator, _TRANSPARENT_AUG))
            for attention in self._open:
                if name in attention.weights:
                    attention.spoiled = True

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._close(node)

    def leave_Module(self, node: cst.Module) -> None:
        self._close(node)

    def _close(self, function: cst.CSTNode) -> None:
        if not self._open:
            return
        for attention in self._open:
            if attention.function is function and not attention.spoiled and attention.products == 1:
                self.report(attention.call)
        self._open = [attention for attention in self._open if attention.function is not function]
