"""TL203 tensor-grown-in-loop: ``x = torch.cat([x, y])`` in a loop regrows the accumulator every iteration."""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from torchlint.context.scopes import method_def
from torchlint.context.tensors import dimension_source, shape_source
from torchlint.rules.base import Invalid, Rule, Valid
from torchlint.syntax import dotted_name, is_name, keyword, literal_value, method_call, positional, string_key, target_names
from torchlint.walker import descendants, iter_children

_QUALNAMES = frozenset(f"torch.{name}" for name in "cat concat concatenate stack hstack vstack".split())
_SMALL_TRIP_COUNT = 16  # `range(n)` with a literal n up to this is a fixed, small unrolling
_ITERATION_WRAPPERS = frozenset({"builtins.enumerate", "builtins.zip", "builtins.reversed"})


_EVERY_CALL = (
    "tensor attribute regrown with torch.cat on every call of hot code: each call copies everything "
    "gathered so far (quadratic over the calls); append the pieces to a list, or write into a buffer "
    "allocated once"
)


class TensorGrownInLoop(Rule):
    code = "TL203"
    name = "tensor-grown-in-loop"
    message = (
        "tensor regrown with torch.cat inside a loop: every iteration copies everything gathered so far "
        "(quadratic); append the pieces to a list and concatenate once after the loop"
    )
    triggers = ("cat(", "stack(", "concatenate(")
    what = (
        "Finds `x = torch.cat([x, y])` (also `torch.stack`, `hstack`, `vstack`, `concat`, `concatenate`, under "
        "any import alias) inside a `for` or `while` loop, where the assigned name (or `self.<attribute>`, or an "
        "entry under a string key, `outs[\"logits\"]`) is "
        "itself one of the joined tensors and is carried to the next iteration: the loop body neither "
        "transforms it back to a fixed size (`x = self.fuse(x)`, `x = x[-k:]`) nor replaces it with a fresh "
        "value (`x = layer(h)`) before the next join; a fresh value in one branch of an `if` whose other branch "
        "joins is the accumulator's first piece (`if first: x = y` / `else: x = torch.cat([x, y])`, also "
        "`x = y if x is None else torch.cat([x, y])`); rows picked by "
        "an index (`tokens = tokens[beam_ids]` in a beam search, also inside the join: `torch.cat([seqs[prev], nxt])`) "
        "keep the accumulator. "
        "Loops with a small fixed trip count are left alone: "
        "`range` over literals (up to 16 iterations) or over `self.<attribute>` configuration "
        "(`range(1, self.scales - 1)` in a Res2Net block, `range(1, len(self.strides))` of `self.strides = (8, 16, 32)`; "
        "not one known to be set larger, `range(self.num_timesteps)` of `__init__(self, timesteps=1000)`), "
        "a literal tuple or list, or the names a module "
        "was configured with, used only as keys (`for layer in self.layers[1:]:` ... `features[layer]`). A loop over a module's "
        "layers is reported (a DenseNet block regrows its features once per layer). Outside a loop, an attribute "
        "regrown with itself in code that runs once per step (`self.cache_k = torch.cat([self.cache_k, k], dim=1)` "
        "in an attention's `forward` called per decoding step, a loss or a training step, not `__init__`, nor a "
        "buffer extended when a test of its size finds it full, `if step >= len(self.losses):`, nor one cut back "
        "to a window, `self.codes = self.codes[-n:]`) is "
        "reported too: the caller's loop is the loop."
    )
    why = (
        "`torch.cat` allocates a new tensor and copies every input into it. When one input is the "
        "accumulator, iteration k copies the k pieces gathered so far, so n iterations copy about n^2/2 "
        "pieces instead of n, and the allocator is asked for a new, larger block every iteration. "
        "Collecting the pieces in a Python list and joining them once after the loop copies each piece once."
    )
    example = Invalid("""
        import torch

        def generate(model, tokens, steps):
            for _ in range(steps):
                next_token = model(tokens)[:, -1:].argmax(-1)
                tokens = torch.cat([tokens, next_token], dim=1)  # expect: TL203
            return tokens
    """)
    use_instead = Valid("""
        import torch

        def generate(model, tokens, steps):
            pieces = [tokens]
            for _ in range(steps):
                next_token = model(torch.cat(pieces, dim=1))[:, -1:].argmax(-1)  # or a KV cache
                pieces.append(next_token)
            return torch.cat(pieces, dim=1)
    """)
    fix_safety = (
        "No fix: the alternative (append each piece to a list and `torch.cat` the list once after the loop, or "
        "preallocate the full tensor and write slices into it) changes how the loop body reads the running "
        "tensor, which it often does (a decoder that feeds back everything generated so far). Not reported "
        "for a single `torch.cat(parts)` after the loop, for a join of fresh pieces that does not include the "
        "target, for a join assigned to a name that is replaced each iteration (U-Net skip concatenations "
        "`x = torch.cat([x, skip])` followed by `x = block(x)`, a buffer trimmed back with `x = x[-k:]`; a "
        "replacement in a branch that leaves the loop, `out = out.masked_fill(done, eos); break`, is no reset), "
        "for a join whose result is indexed or reduced before it is assigned (`torch.cat([x, y]).topk(k)`), "
        "and for loops with a small fixed trip count."
    )
    valid = (
        Valid("""
            import torch

            def add_angles(preds):
                for pred in preds:  # one dict per image: each entry grows once
                    pred["bboxes"] = torch.cat([pred["bboxes"], pred.pop("extra")], dim=-1)
                return preds
        """),
        Valid("""
            import torch
            from torch import nn

            class Neck(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.strides = (4, 8, 16, 32)

                def forward(self, feats):
                    pyramid = feats[0].flatten(2)
                    for level in range(1, len(self.strides)):  # four levels, fixed by the configuration
                        pyramid = torch.cat([pyramid, feats[level].flatten(2)], 2)
                    return pyramid
        """),
        Valid("""
            import torch
            import torch.nn.functional as F
            from torch import nn

            class TrackedLoss(nn.Module):
                def forward(self, pred, target):
                    loss = F.mse_loss(pred, target)
                    if self.step >= len(self.history):  # extended by a block when full: a few times in all
                        self.history = torch.cat([self.history, loss.new_zeros(1000)])
                    self.history[self.step] = loss.detach()
                    self.step += 1
                    return loss
        """),
        Valid("""
            import torch
            from torch import nn

            class Quantizer(nn.Module):
                def forward(self, x):
                    codes = self.codebook(x).argmin(-1)
                    self.recent = torch.cat([self.recent, codes.flatten()])
                    self.recent = self.recent[-self.window:]  # a window: as long as it was
                    return codes
        """),
        Valid("""
            import torch

            def split_edges(store, index, undirected):
                for key, value in store.items():
                    value = value[index]
                    if undirected:
                        value = torch.cat([value, value], dim=0)  # each entry doubled once
                    store[key] = value
        """),
        Valid("""
            import torch
            from torch import nn

            class Memory(nn.Module):
                def __init__(self, seed):
                    super().__init__()
                    self.bank = torch.cat([self.bank, seed])  # set-up, once

                def add_task(self, exemplars):  # called once per task, not per step
                    self.bank = torch.cat([self.bank, exemplars])

                def forward(self, x):
                    return x @ self.bank.T
        """),
        Valid("""
            import torch
            import torch.nn.functional as F
            from torch import nn

            class Padim(nn.Module):
                def generate_embedding(self, features):
                    embeddings = features[self.layers[0]]
                    for layer in self.layers[1:]:  # the layer names it was configured with: a few
                        upsampled = F.interpolate(features[layer], size=embeddings.shape[-2:])
                        embeddings = torch.cat((embeddings, upsampled), 1)
                    return embeddings
        """),
        Valid("""
            import torch
            def embed(model, loader):
                feats = []
                for x in loader:
                    feats.append(model(x))
                return torch.cat(feats)
        """),
        Valid("""
            import torch
            class Up(nn.Module):
                def forward(self, x, skips):
                    for block, skip in zip(self.blocks, skips):
                        x = torch.cat([x, skip], dim=1)
                        x = block(x)
                    return x
        """),
        Valid("""
            import torch
            class Recurrent(nn.Module):
                def forward(self, x, keyframes):
                    feat = x.new_zeros(x.shape)
                    for i in range(x.shape[1]):
                        if i in keyframes:
                            feat = torch.cat([feat, keyframes[i]], dim=1)
                            feat = self.fusion(feat)
                        feat = self.trunk(torch.cat([x[:, i], feat], dim=1))
                    return feat
        """),
        Valid("""
            import torch
            class PointHead(nn.Module):
                def forward(self, fine, coarse):
                    x = torch.cat([fine, coarse], dim=1)
                    for fc in self.fcs:
                        x = fc(x)
                        x = torch.cat((x, coarse), dim=1)
                    return self.logits(x)
        """),
        Valid("""
            import torch
            class Neck(nn.Module):
                def forward(self, feats):
                    out = self.detect(feats[-1])
                    for i, x in enumerate(feats[:-1]):
                        tmp = self.convs[i](out)
                        tmp = torch.cat((tmp, x), 1)
                        out = self.detects[i](tmp)
                    return out
        """),
        Valid("""
            import torch
            def best_models(draw, rounds, keep):
                kept_support = torch.zeros(0)
                kept = torch.zeros(0, 3, 3)
                while rounds > 0:
                    models, support = draw()
                    kept_support, order = torch.cat([kept_support, support]).topk(keep)
                    kept = torch.cat([kept, models])[order]
                    rounds -= 1
                return kept
        """),
        Valid("""
            import torch
            def sliding(model, x, steps, window):
                buf = x
                for _ in range(steps):
                    buf = torch.cat([buf, model(buf)[:, -1:]], dim=1)
                    buf = buf[:, -window:]
                return buf
        """),
        Valid("""
            import torch
            class Res2Block(nn.Module):
                def forward(self, x):
                    spx = torch.split(x, self.width, 1)
                    out = sp = self.convs[0](spx[0])
                    for i in range(1, self.scales - 1):
                        sp = self.convs[i](sp + spx[i])
                        out = torch.cat((out, sp), 1)
                    return out
        """),
        Valid("""
            import torch
            def pyramid(x):
                for scale in (2, 4, 8):
                    x = torch.cat([x, x[:, :, ::scale]], dim=2)
                return x
        """),
        Valid("""
            import torch
            def three(x, f):
                for _ in range(3):
                    x = torch.cat([x, f(x)], dim=1)
                return x
        """),
        Valid("""
            import torch
            def sample(model, image, cond, timesteps, guidance):
                for t in timesteps:
                    if guidance:
                        model_input = torch.cat([image] * 2)
                    else:
                        model_input = image
                    if cond is not None:
                        model_input = torch.cat([model_input, cond], dim=1)
                    image = model(model_input, t)
                return image
        """),
        Valid("""
            import torch
            def swav(outputs_per_crop, queue):
                codes = []
                for i in range(len(outputs_per_crop)):
                    with torch.no_grad():
                        outputs = outputs_per_crop[i].detach()
                        if queue is not None:
                            outputs = torch.cat((outputs, queue[i]))
                    codes.append(outputs)
                return codes
        """),
        Valid("""
            import torch
            def split(reference, other, pick):
                while len(other):
                    idx = pick(other)
                    other = torch.cat([other[:idx], other[idx + 1:]], dim=0)
                return other
        """),
        Valid("""
            import torch
            def documents(seq_lens):
                ids = []
                for lens in seq_lens:
                    doc = torch.cat([torch.full((n,), i) for i, n in enumerate(lens)])
                    ids.append(doc)
                return torch.stack(ids)
        """),
        Valid("""
            import torch
            def pad(x, n):
                x = torch.cat([x, x.new_zeros(n)])
                return x
        """),
    )
    invalid = (
        Invalid("""
            import torch

            @torch.no_grad()
            def collect(model, loader, device):
                outs = {"logits": torch.empty(0, device=device)}
                for x, _ in loader:
                    outs["logits"] = torch.cat([outs["logits"], model(x.to(device))])  # expect: TL203
                return outs
        """),
        Invalid("""
            import torch

            @torch.no_grad()
            def beam_search(step, seqs, scores, vocab, k, max_len=50):
                for _ in range(max_len):
                    logp = step(seqs[:, -1]) + scores.unsqueeze(1)
                    scores, top = logp.view(-1).topk(k)
                    prev, nxt = top // vocab, top % vocab
                    seqs = torch.cat([seqs[prev], nxt.unsqueeze(1)], dim=1)  # expect: TL203
                return seqs
        """),
        Invalid("""
            import torch
            from torch import nn

            class Sampler(nn.Module):
                def __init__(self, model, timesteps=1000):
                    super().__init__()
                    self.model = model
                    self.num_timesteps = int(timesteps)  # a thousand steps, not a few levels

                @torch.no_grad()
                def sample(self, img):
                    imgs = img.unsqueeze(0)
                    for i in reversed(range(self.num_timesteps)):
                        img = self.model(img, i)
                        imgs = torch.cat([imgs, img.unsqueeze(0)])  # expect: TL203
                    return imgs
        """),
        Invalid("""
            import torch

            @torch.no_grad()
            def generate(model, out, steps, eos):
                for _ in range(steps):
                    logits = model(out)[:, -1]
                    out = torch.cat((out, logits.argmax(-1, keepdim=True)), dim=-1)  # expect: TL203
                    if (out == eos).any(-1).all():
                        out = out.masked_fill(out.cumsum(-1) > 1, eos)  # the last value: the loop ends
                        break
                return out
        """),
        Invalid("""
            import torch
            class DenseBlock(nn.Module):
                def forward(self, x):
                    for layer in self.layers:
                        x = torch.cat([x, layer(x)], 1)  # expect: TL203
                    return x
        """),
        Invalid("""
            import torch
            def kmeans_pp(x, k):
                centroids = x[:1]
                for _ in range(k - 1):
                    d = torch.cdist(x, centroids).min(dim=1).values
                    centroids = torch.cat((centroids, x[torch.multinomial(d, 1)]), dim=0)  # expect: TL203
                return centroids
        """),
        Invalid("""
            import torch as th
            def add_noise(noise, noise_len, lengths):
                while th.any(noise_len < lengths):
                    prepend = noise[:, : noise_len.min()]
                    noise = th.cat((prepend, noise), axis=1)  # expect: TL203
                    noise_len += noise_len.min()
                return noise
        """),
        Invalid("""
            import torch
            class Decoder(nn.Module):
                def infer(self, memory, steps):
                    first = True
                    for _ in range(steps):
                        mel, gate = self.decode(memory)
                        if first:
                            mels, gates = mel.unsqueeze(0), gate
                            first = False
                        else:
                            mels = torch.cat((mels, mel.unsqueeze(0)), dim=0)  # expect: TL203
                            gates = torch.cat((gates, gate), dim=0)  # expect: TL203
                    return mels, gates
        """),
        Invalid("""
            from torch import cat
            def generate(model, idxs_all, n_words):
                for _ in range(n_words):
                    idx = model(idxs_all).argmax(-1)
                    idxs = idxs_all = cat([idxs_all, idx[None]])  # expect: TL203
                return idxs
        """),
        Invalid("""
            import torch
            def decode(step, mask, n):
                for _ in range(n):
                    if mask is not None:
                        mask = torch.cat(  # expect: TL203
                            [mask, torch.ones(mask.shape[0], 1)], dim=-1
                        )
                    step(mask)
                return mask
        """),
        Invalid("""
            import torch

            def embed_all(model, loader):
                feats = None
                for x in loader:
                    f = model(x)
                    feats = f if feats is None else torch.cat([feats, f])  # expect: TL203
                return feats
        """),
        Invalid("""
            import torch

            def beam_search(model, tokens, steps, beam):
                for _ in range(steps):
                    scores, next_tokens = model(tokens)[:, -1].topk(beam)
                    survivors = next_tokens // beam
                    tokens = tokens[survivors]  # the surviving beams, as long as before
                    tokens = torch.cat((tokens, next_tokens % beam), dim=1)  # expect: TL203
                return tokens
        """),
        Invalid("""
            import torch
            from torch import nn

            class CachedAttention(nn.Module):
                def forward(self, q, k, v):
                    if self.cache_k is not None:
                        self.cache_k = torch.cat([self.cache_k, k], dim=1)  # expect: TL203
                        self.cache_v = torch.cat([self.cache_v, v], dim=1)  # expect: TL203
                    else:
                        self.cache_k, self.cache_v = k, v
                    return torch.softmax(q @ self.cache_k.transpose(1, 2), dim=-1) @ self.cache_v
        """),
        Invalid("""
            import torch
            class Buffer:
                def fill(self, batches):
                    for batch in batches:
                        self.scores = torch.vstack([self.scores, batch])  # expect: TL203
        """),
        Invalid("""
            import torch
            def stitch(segments):
                out = torch.zeros(0)
                for i, seg in enumerate(segments):
                    out = torch.concat([out, seg[1:] if i else seg])  # expect: TL203
                return out
        """),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) not in _QUALNAMES:
            return
        assign, value = self.ctx.parent, node
        if isinstance(assign, cst.IfExp) and node is assign.orelse and len(self.ctx.ancestors) > 1:
            assign, value = self.ctx.ancestors[-2], assign  # acc = x if acc is None else torch.cat([acc, x])
        scope = self.ctx.scope
        if not (isinstance(assign, cst.Assign) and assign.value is value and scope.kind in ("loop", "function")):
            return
        joined = _joined_keys(node)
        target_node = next((target for target in _targets(assign) if _key(target) in joined), None)
        target = _key(target_node) if target_node is not None else None
        if scope.kind == "function":
            if target is not None and target.startswith("self.") and scope.name != "__init__" \
                    and not self._when_full() and not _trimmed(scope.node, target):
                self.report(node, _EVERY_CALL, hot_when=_runs_every_call)  # self.keys = torch.cat([self.keys, k])
            return
        loop = scope.node
        # the loop rebinds it every step (also the object it is an entry or attribute of: `for pred in preds:`)
        fresh = isinstance(loop, cst.For) and target_node is not None and _root(target_node) in target_names(loop.target)
        if target is not None and not fresh and self._in_body(loop) and not _fixed_trip_count(self.ctx, loop):
            if _carried(loop, target, assign):
                self.report(node)

    def _when_full(self) -> bool:
        """Is the join under a test of the size of one of the object's tensors (``if self.step >=
        len(self.losses):``): buffers extended when full, a few times in all?"""
        return any(
            isinstance(holder, cst.If) and any(
                (dotted_name(_sized(inner)) or "").startswith("self.")
                for inner in descendants(holder.test) if isinstance(inner, cst.BaseExpression)
            )
            for holder in self.ctx.ancestors
        )

    def _in_body(self, loop: cst.CSTNode) -> bool:
        """Is the visited node in ``loop``'s body (not its iterable or ``else``)?"""
        ancestors = self.ctx.ancestors
        for index in range(len(ancestors) - 1, 0, -1):
            if ancestors[index - 1] is loop:
                return ancestors[index] is loop.body
        return False


def _trimmed(function: cst.CSTNode, key: str) -> bool:
    """Does ``function`` also cut ``key`` back to a window (``self.codes = self.codes[-n:]``)?"""
    return any(
        isinstance(node, cst.Assign) and key in _target_keys(node) and isinstance(node.value, cst.Subscript)
        and dotted_name(node.value.value) == key
        for node in descendants(function)
    )


def _sized(node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """What ``node`` reads the size of: ``len(x)``, ``x.shape``, ``x.size(0)``, ``x.numel()``."""
    numel = method_call(node, "numel")
    return dimension_source(node) or shape_source(node) or (numel.value if numel is not None else None)


def _runs_every_call(scope) -> bool:
    """Hot code (forward, a loss, a training step and what they call) runs once per call: an
    attribute it regrows grows by one piece per step, the caller's loop is the loop."""
    return True


def _joined_keys(call: cst.Call) -> frozenset:
    """The dotted names listed as pieces in ``torch.cat([a, self.b, f(c)])``: {"a", "self.b"};
    rows picked from one count as it (``torch.cat([seqs[prev], nxt])``: a beam search reorders
    its sequences and grows them)."""
    pieces = keyword(call, "tensors")
    args = positional(call)
    pieces = pieces.value if pieces is not None else args[0].value if args else None
    if not isinstance(pieces, (cst.List, cst.Tuple)):
        return frozenset()
    return frozenset(filter(None, (_piece_key(element.value) for element in pieces.elements)))


def _piece_key(piece: cst.BaseExpression) -> Optional[str]:
    if isinstance(piece, cst.Subscript) and (held := dotted_name(piece.value)) is not None and _reorders(piece, held):
        return held
    return _key(piece)


def _key(node: cst.BaseExpression) -> Optional[str]:
    """``a``, ``self.b``, or an entry under a string key, ``outs["logits"]`` (a dict of accumulators)."""
    if isinstance(node, cst.Subscript) and isinstance(entry := string_key(node), str) and (held := dotted_name(node.value)):
        return f"{held}[{entry!r}]"
    return dotted_name(node)


def _root(node: cst.BaseExpression) -> Optional[str]:
    """The name a dotted name or entry hangs from: ``pred`` of ``pred["boxes"]``, ``self`` of ``self.b``."""
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _target_keys(assign: cst.Assign) -> Iterator[str]:
    """The dotted names an assignment rebinds (``a``, ``self.b``; in tuples too)."""
    return filter(None, map(_key, _targets(assign)))


def _targets(assign: cst.Assign) -> Iterator[cst.BaseExpression]:
    """The single targets of an assignment, tuples and lists unpacked."""
    for target in assign.targets:
        yield from _unpacked(target.target)


def _unpacked(target: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _unpacked(element.value)
    else:
        yield target


def _keys(target: cst.BaseExpression) -> Iterator[str]:
    return filter(None, map(_key, _unpacked(target)))


def _mentions(node: cst.CSTNode, key: str) -> bool:
    return any(
        isinstance(inner, (cst.Name, cst.Attribute, cst.Subscript)) and _key(inner) == key for inner in descendants(node)
    )


def _carried(loop: cst.CSTNode, key: str, join: cst.Assign) -> bool:
    """Does the joined value of ``key`` reach the next iteration as it is? Not if the body
    rebinds ``key`` from itself (a fusion back to fixed width, a trim) or from something else
    (a fresh value every iteration, a flush; not rows picked by an index, ``seqs = seqs[beam_ids]``,
    which keep its length), except for the accumulator's first piece: a
    fresh value in one branch of an ``if`` whose other branch joins
    (``if first: x = y`` / ``else: x = torch.cat([x, y])``), and a branch that leaves the loop
    (``if done: out = out.masked_fill(mask, pad); break``)."""
    stack: list = [(child, ()) for child in iter_children(loop.body)]
    while stack:
        node, branches = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, (cst.Assign, cst.AnnAssign)) and node is not join and node.value is not None:
            targets = _target_keys(node) if isinstance(node, cst.Assign) else _keys(node.target)
            if key in targets and not (isinstance(node.value, cst.Call) and key in _joined_keys(node.value)) \
                    and not _reorders(node.value, key):
                if _mentions(node.value, key) or not any(
                    _holds(statement, join) and not _holds(branch, join) for statement, branch in branches
                ):
                    return False
        if isinstance(node, cst.If):
            stack.append((node.test, branches))
            stack.extend(
                (branch, (*branches, (node, branch))) for branch in (node.body, node.orelse)
                if branch and not _leaves_loop(branch)  # `out = out.masked_fill(done, pad); break`: the last value
            )
        else:
            stack.extend((child, branches) for child in iter_children(node))
    return True


def _reorders(value: cst.BaseExpression, key: str) -> bool:
    """``seqs[beam_ids]``: rows of ``key`` picked by index tensors (a beam search keeping its
    survivors), as long as before; not a slice (``x[-k:]``, a trim) nor a number (``x[0]``)."""
    return isinstance(value, cst.Subscript) and dotted_name(value.value) == key and all(
        isinstance(element.slice, cst.Index) and isinstance(element.slice.value, (cst.Name, cst.Attribute))
        for element in value.slice
    )


def _leaves_loop(branch: cst.CSTNode) -> bool:
    """Does ``branch`` (an ``if``'s body or ``else``) end in ``break`` or ``return``?"""
    block = branch.body if isinstance(branch, cst.Else) else branch
    lines = block.body if isinstance(block, cst.IndentedBlock) else [block]
    last = lines[-1] if lines else None
    return isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and isinstance(
        last.body[-1], (cst.Break, cst.Return)
    )


def _holds(root: cst.CSTNode, node: cst.CSTNode) -> bool:
    return any(inner is node for inner in descendants(root))


def _fixed_trip_count(ctx, loop: cst.CSTNode) -> bool:
    """Does ``loop`` run a small number of times fixed by the code: ``range`` over literals
    (at most ``_SMALL_TRIP_COUNT`` iterations) or ``self.<attribute>`` configuration
    (``range(1, self.scales - 1)``), a literal tuple or list, or configured keys, also under
    ``enumerate``/``zip``?"""
    if not isinstance(loop, cst.For):
        return False
    iterable = loop.iter
    while isinstance(iterable, cst.Call) and ctx.qualname(iterable.func) in _ITERATION_WRAPPERS and iterable.args:
        iterable = iterable.args[0].value
    if isinstance(iterable, (cst.Tuple, cst.List, cst.Set)) or _configured_keys(loop, iterable):
        return True
    if not (isinstance(iterable, cst.Call) and ctx.qualname(iterable.func) == "builtins.range"):
        return False
    bounds = [arg.value for arg in iterable.args]
    values = [literal_value(bound) for bound in bounds]
    if all(isinstance(value, int) for value in values) and 1 <= len(values) <= 3 and values[2:] != [0]:
        return len(range(*values)) <= _SMALL_TRIP_COUNT
    return all(_fixed_bound(ctx, bound) for bound in bounds)


def _configured_keys(loop: cst.For, iterable: cst.BaseExpression) -> bool:
    """``for layer in self.layers[1:]:`` whose body only looks ``layer`` up (``features[layer]``):
    the names a module was configured with, not layers it runs (a DenseNet block's
    ``for layer in self.net: x = torch.cat((x, layer(x)), 1)`` regrows once per layer)."""
    source = iterable.value if isinstance(iterable, cst.Subscript) else iterable
    if not (dotted_name(source) or "").startswith("self.") or not isinstance(loop.target, cst.Name):
        return False
    name = loop.target.value
    keys = [element.slice.value for node in descendants(loop.body) if isinstance(node, cst.Subscript)
            for element in node.slice if isinstance(element.slice, cst.Index)]
    uses = [node for node in descendants(loop.body) if isinstance(node, cst.Name) and node.value == name]
    return bool(uses) and all(any(use is key for key in keys) for use in uses)


def _fixed_bound(ctx, node: cst.BaseExpression) -> bool:
    """A range bound made of literals and ``self`` attributes, numbers set when the module was
    built (``self.scales - 1``), or the length of a literal tuple the class holds
    (``len(self.strides)`` of ``self.strides = (8, 16, 32)``)."""
    if isinstance(node, cst.BinaryOperation):
        return _fixed_bound(ctx, node.left) and _fixed_bound(ctx, node.right)
    if isinstance(node, cst.UnaryOperation):
        return _fixed_bound(ctx, node.expression)
    if isinstance(node, cst.Call) and is_name(node.func, "len") and len(node.args) == 1:
        held = dotted_name(node.args[0].value) or ""
        return held.startswith("self.") and held.count(".") == 1 and isinstance(
            ctx.attribute_value(held[len("self."):]), (cst.Tuple, cst.List)
        )
    held = dotted_name(node) or ""
    if held.startswith("self.") and held.count(".") == 1:
        number = _configured_number(ctx, held[len("self."):])
        return number is None or number <= _SMALL_TRIP_COUNT  # not `self.num_timesteps` of `timesteps=1000`
    return isinstance(literal_value(node), int) or held.startswith("self.")


def _configured_number(ctx, attribute: str) -> Optional[int]:
    """The number ``self.<attribute>`` is set to when known: a literal, or the literal default of
    the ``__init__`` parameter it is set from (``self.num_timesteps = int(timesteps)`` of ``timesteps=1000``)."""
    value = ctx.attribute_value(attribute)
    if isinstance(value, cst.Call) and is_name(value.func, "int") and len(value.args) == 1:
        value = value.args[0].value
    number = literal_value(value) if value is not None else None
    if isinstance(number, int):
        return number
    cls = ctx.scope.enclosing_class
    init = method_def(cls.node, "__init__") if cls is not None and isinstance(cls.node, cst.ClassDef) else None
    if init is None or not isinstance(value, cst.Name):
        return None
    default = next((param.default for param in init.params.params if param.name.value == value.value), None)
    number = literal_value(default) if default is not None else None
    return number if isinstance(number, int) else None
