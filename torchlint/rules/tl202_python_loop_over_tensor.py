"""TL202 python-loop-over-tensor: a Python loop that walks a tensor element by element in a hot path."""

from __future__ import annotations

from typing import Callable, Iterable, List, Optional, Sequence, Set, Tuple

import libcst as cst

from torchlint.context import HOST, MODEL, NOT, STEP, TENSOR
from torchlint.context.calls import is_parameter
from torchlint.context.scopes import Scope
from torchlint.context.tensors import HOST_READ_BUILTINS, dimension_index, dimension_source
from torchlint.rules.base import Invalid, Rule, Valid
from torchlint.syntax import dotted_name, is_name, literal_value, method_call, positional, target_names
from torchlint.walker import descendants, iter_children, simple_statements


_CHUNKS = frozenset({"split", "chunk", "tensor_split", "split_with_sizes"})
_NMS = frozenset(f"torchvision.ops.{module}{name}" for module in ("", "boxes.") for name in ("nms", "batched_nms"))
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp)


class PythonLoopOverTensor(Rule):
    code = "TL202"
    name = "python-loop-over-tensor"
    message = (
        "Python loop over the elements of a tensor in a hot path: kernel launches per element; "
        "vectorise (broadcasting, gather/scatter, einsum, bucketize/searchsorted)"
    )
    what = (
        "Finds `for` loops and comprehensions in `forward`, losses and their helpers that walk a "
        "tensor element by element: iterating the tensor itself (`for row in x`, "
        "`enumerate(x)`, `zip(x, y)`, `enumerate(zip(x, y))`, `x.unbind(0)`), or a `range` over one of its dimensions "
        "(`range(x.shape[0])`, `range(x.size(1))`, `range(len(x))`, or `B` from `B, T, C = x.shape`, "
        "give or take a number: `range(T - 1)`) "
        "whose body indexes a tensor with the loop variable (`x[i]`, `out[:, i]`) or compares one "
        "with it (`batch_idx == i`: a mask per element), or the result of a "
        "torch call (`for c in labels.unique()`). The iterated name must be shown to be a tensor in "
        "the function (used as one, `x.shape`, `x.view(...)`; annotated `Tensor`; or assigned a torch "
        "call's result; the fields of a Hugging Face model's output, `out.logits`, are tensors too), "
        "which tells a tensor from a list of feature maps. In a helper, a parameter "
        "walked by `range(t.shape[0])` (or `range(t[0].shape[0])`), indexed `t[i]` or compared "
        "with the loop variable (`t[:, 0] == i`) counts when every call of the helper in "
        "the file passes a tensor for it; a piece of the batch a training loop or a Lightning step is "
        "given (`x, y = batch`) counts once it is passed to a torch function (`F.cross_entropy(logits, "
        "y)`). Inside a training step (a training loop's body, "
        "`training_step`), where batches are also walked for host work (caching, per-image "
        "post-processing), a loop counts only when each step reads an element on the host (a test "
        "of it, `int()` or `.item()` of it; not in an `assert`), compares a tensor with it (a mask "
        "per element) or writes a tensor's slot by the loop index (also in place: `counts[y[i]] += 1`); "
        "the training loop itself is "
        "never reported."
    )
    why = (
        "Each iteration issues its own small operations: `x[i]` makes a view, and every op on it is "
        "one or more kernel launches (several microseconds each on a GPU, a few of dispatch on the "
        "CPU) doing almost no work, so the loop costs launches x elements and grows with the batch "
        "or sequence length. Writes through boolean masks (`q[m] = v`) and Python reads of values "
        "add a host sync per iteration. A vectorised formulation does the whole tensor in a handful "
        "of kernels: broadcasting, `torch.gather`/`scatter_add`, `einsum`, "
        "`torch.bucketize`/`searchsorted` for binning, `torch.where` for conditionals."
    )
    example = Invalid("""
        import torch
        from torch import nn

        class Quantize(nn.Module):
            def forward(self, x):  # x: (rows, cols); boundaries: (levels - 1,)
                q = torch.zeros_like(x)
                for i in range(x.shape[0]):  # expect: TL202
                    for level in range(1, self.levels):
                        q[i][x[i] >= self.boundaries[level - 1]] = level
                return q
    """)
    use_instead = Valid("""
        import torch
        from torch import nn

        class Quantize(nn.Module):
            def forward(self, x):
                return torch.bucketize(x, self.boundaries, right=True).to(x.dtype)
    """)
    fix_safety = (
        "No fix: the vectorised form depends on what the loop computes. Not reported for loops over "
        "modules (`self.layers`, `nn.ModuleList`, lists of blocks, `zip(masks, self.experts)`), over Python lists of tensors "
        "(`for f in features`), over `zip` of lists or of a tensor with a list a comprehension or display "
        "built, also on one path only (`zip(pitch, lengths)` of per-utterance tracks, `zip(samples, scores)` "
        "after `samples = [None] * n`: each step takes one host item), over a "
        "literal or attribute range "
        "(`range(3)`, `range(self.num_layers)`), over chunks (`x.split(n)`, `x.chunk(k)`, also held in a name or sliced, `pieces[:k]`: a few "
        "large pieces), over a dimension whose body does not index per element (`for h in "
        "range(x.shape[1]): outs.append(self.heads[h](x))`), over layers (the body picks a "
        "submodule by the loop variable, `self.cls_branches[i]`; a row of a parameter or buffer, "
        "`self.centers[labels[i]]`, is no submodule), for recurrences where each step "
        "needs the previous one (an RNN cell fed its own state, `h = self.cell(x[:, t], h)`, also "
        "with states kept in lists, `h[0], c[0] = cell(x[:, t], (h[0], c[0]))`; a state computed "
        "from its own old value, `h = f[t] * h + x[t]`, also through other names, `h_t = x[t] + "
        "f[t] * prev` ... `prev = h_t`; `for x_t in x.unbind(1)`; or a filter reading "
        "`y[:, t - 1]`; a running sum is none, also one started on the first step, `loss = l if "
        "loss is None else loss + l`), for comprehensions that only take views (`[x[:, t] for t in range(T)]` is "
        "`x.unbind(1)`: no kernels), for loops that hand each element to a library taking host "
        "arrays (`[linear_sum_assignment(c) for c in C]`, `librosa.stft(x[i].numpy())`), for "
        "comprehensions that only copy each element to the host (`[w[b].cpu() for b in range(B)]`), for "
        "loops that read a host record by key each step (`metas[i][\"img_shape\"]`), for "
        "loops that only store each element in a per-item container, computing nothing on it "
        "(`sample.set_pred_score(score)`, `SegDataSample(gt=PixelData(data=label))`, `{\"scores\": s, "
        "\"boxes\": b}`), for per-item selections of data-dependent size collected in a list the "
        "function never joins into a tensor (`kept.append(boxes[i][scores[i] > t])`, also by a mask or "
        "index list held in a name, `keep = nms(boxes[i], scores[i], iou)`: ragged results "
        "have no dense form), for copies of each item into a slice of its own size (`pad[: img.shape[0], : "
        "img.shape[1]].copy_(img)` for images of different sizes padded into one batch, `target[b, : len(tokens)] = "
        "torch.tensor(tokens)`), in training-loop code, or "
        "in `while` loops (their trip count is not visible). Nor a "
        "loop over a dimension other than the batch that runs one of the model's submodules (or a "
        "callable the function is given, `loss_func`) on each "
        "slice (`for i in range(t): aligned.append(self.align(feats[:, i], ref))`): each iteration "
        "is a whole batched network call per frame, source or layer. Over the batch "
        "(`range(x.shape[0])`), or with a mask per element (`y == cls`), it is still reported."
    )
    valid = (
        Valid("""
            from typing import List
            import torch
            from torch import nn

            class Backbone(nn.Module):
                def forward(self, images: List[torch.Tensor]):
                    c, h, w = (max(sizes) for sizes in zip(*(img.shape for img in images)))
                    batch = images[0].new_zeros(len(images), c, h, w)
                    for i in range(batch.shape[0]):  # images of different sizes
                        img = images[i]
                        batch[i, : img.shape[0], : img.shape[1], : img.shape[2]].copy_(img)
                    return self.body(batch)
        """),
        Valid("""
            import torch
            from torch import nn

            class Criterion(nn.Module):
                def forward(self, emissions, lengths, targets):
                    padded = torch.zeros(emissions.size(0), emissions.size(1), dtype=torch.long)
                    for b in range(emissions.size(0)):  # token lists of different lengths
                        tokens = self.pack(targets[b, : lengths[b]].tolist())
                        padded[b, : len(tokens)] = torch.tensor(tokens)
                    return self.loss(emissions, padded.to(emissions.device))
        """),
        Valid("""
            import torch
            from torch import nn

            class Classifier(nn.Module):
                def forward(self, images, data_samples=None, mode="tensor"):
                    if mode == "predict":
                        return self.predict(images, data_samples)
                    return self.head(images)

                def predict(self, images, data_samples=None):
                    scores = self.head(images).softmax(dim=1)
                    if data_samples is None:
                        data_samples = [None] * scores.size(0)  # a list on this path: a record per image
                    results = []
                    for sample, score in zip(data_samples, scores):
                        if sample is None:
                            sample = Record()
                        sample.set_pred_score(score)
                        results.append(sample)
                    return results
        """),
        Valid("""
            import torch
            from torch import nn

            class PostProcess(nn.Module):
                @torch.no_grad()
                def forward(self, logits, boxes):
                    scores, labels = logits.softmax(-1).max(-1)
                    return [{"scores": s, "labels": l, "boxes": b} for s, l, b in zip(scores, labels, boxes)]
        """),
        Valid("""
            import torch
            from torch import nn

            class IntegrateAndFire(torch.autograd.Function):
                @staticmethod
                def forward(ctx, inputs, threshold):
                    potential = torch.zeros_like(inputs[0])
                    spikes = []
                    for t in range(inputs.size(0)):  # a recurrence: the reset depends on the state
                        potential = potential + inputs[t]
                        spike = (potential >= threshold).float()
                        potential = potential - spike * threshold
                        spikes.append(spike)
                    return torch.stack(spikes)

            def discounted_loss(values, weights):
                for i in range(values.size(0)):
                    values[i] += values[i - 1] * weights[i]  # each element needs the previous one
                return values.sum()

            class Fusion(nn.Module):
                def forward(self, x: torch.Tensor):
                    return torch.cat([layer(xi) for layer, xi in zip(self.stages[0], x)], dim=1)  # one layer each
        """),
        Valid("""
            import torch
            from torch import nn

            class RPNHead(nn.Module):
                def loss(self, cls_scores, anchors, gt_bboxes_list):
                    labels = []
                    for i in range(cls_scores.shape[0]):  # one assignment per image: a list of boxes each
                        labels.append(self.assign(anchors, gt_bboxes_list[i]))
                    return self.loss_cls(cls_scores.flatten(1), torch.stack(labels))
        """),
        Valid("""
            import torch
            from torch import nn

            class RPN(nn.Module):
                def forward(self, features, anchors):
                    objectness, deltas = self.head(features)  # one tensor per feature level
                    deltas = torch.cat([d.flatten(1) for d in deltas], 1)  # a list until joined here
                    return objectness, self.box_coder.decode(deltas.detach(), anchors)
        """),
        Valid("""
            import torch
            from torch import nn

            class PostProcess(nn.Module):
                def forward(self, boxes, scores):
                    kept = []
                    for i in range(boxes.shape[0]):
                        keep = scores[i] > self.threshold  # a data-dependent number of boxes per image
                        kept.append(boxes[i][keep])
                    return kept
        """),
        Valid("""
            import torch

            def train(model, loader, optimizer):
                for x, infos in loader:
                    tokens = model.encode(x)
                    for info, row in zip(infos, tokens):  # host work per item in the step: caching
                        info.tokens = row.short().cpu()
                    loss = model(tokens).mean()
                    loss.backward()
                    optimizer.step()

            def fit(model, data, optimizer):
                data = data.float()
                for i in range(data.shape[0]):  # the training loop itself: one sample per step
                    if data[i].isnan().any():
                        continue
                    loss = model(data[i]).sum()
                    loss.backward()
                    optimizer.step()
        """),
        Valid("""
            import torch
            from torch import nn

            class F0(nn.Module):
                def forward(self, utterances, frames: torch.Tensor):
                    pitch = [self.pyworld_f0(u) for u in utterances]  # ragged tracks, one per utterance
                    return [self.adjust(p, n) for p, n in zip(pitch, frames)]  # a list's items in turn
        """),
        Valid("""
            from torch import nn

            class PixelDecoder(nn.Module):
                def forward(self, feats, batch_img_metas):
                    bs = feats.shape[0]
                    mask = feats.new_ones((bs, 64, 64))
                    for i in range(bs):  # each image's size comes from its host metadata record
                        img_h, img_w = batch_img_metas[i]["img_shape"]
                        mask[i, :img_h, :img_w] = 0
                    return self.encode(feats, mask)
        """),
        Valid("""
            from torch import nn
            from graphs.typing import MaybeHeteroTensor  # Union[Tensor, Dict[str, Tensor]]

            class Trim(nn.Module):
                def forward(self, x: MaybeHeteroTensor, sizes):
                    if isinstance(x, dict):  # a tensor has no items(): a dict of them, one per type
                        return {k: v[: sizes[k]] for k, v in x.items()}
                    return x[: sizes]
        """),
        Valid("""
            import torch
            import torch.nn.functional as F
            from torch import nn

            def shift(t, amount, mask=None):
                if mask is not None:
                    t = t.masked_fill(~mask[..., None], 0.0)
                return F.pad(t, (0, 0, amount, -amount), value=0.0)

            class ShiftTokens(nn.Module):
                def forward(self, x, mask=None):
                    shifts = self.shifts
                    splitted = x.split(x.shape[-1] // len(shifts), dim=-1)
                    to_shift, rest = splitted[: len(shifts)], splitted[len(shifts):]
                    to_shift = [shift(*args, mask=mask) for args in zip(to_shift, shifts)]  # a few chunks
                    return torch.cat((*to_shift, *rest), dim=-1)
        """),
        Valid("""
            import torch
            from torch import nn

            class Decoder(nn.Module):
                def forward(self, tokens, encoder_out):
                    bsz, seqlen = tokens.size()
                    x = self.embed(tokens).transpose(0, 1)
                    hiddens = [encoder_out.mean(dim=0)] * len(self.layers)
                    cells = [x.new_zeros(bsz, self.hidden_size)] * len(self.layers)
                    outs = []
                    for j in range(seqlen):  # each step needs the states the previous one stored
                        step = x[j]
                        for i, layer in enumerate(self.layers):
                            hidden, cell = layer(step, (hiddens[i], cells[i]))
                            hiddens[i] = hidden
                            cells[i] = cell
                            step = hidden
                        outs.append(step)
                    return torch.stack(outs)
        """),
        Valid("""
            import numpy as np
            from torch import nn

            def copy_rows_(cache, idx, val):  # called with host arrays only
                for i in range(idx.shape[0]):
                    cache[i][idx[i]] = val[i]
                return cache

            class Tagger(nn.Module):
                def forward(self, x):
                    spans = copy_rows_(np.zeros((4, 8)), np.arange(8).reshape(4, 2), np.ones((4, 2)))
                    return self.head(x), spans
        """),
        Valid("""
            import torch
            class Separator(nn.Module):
                def forward(self, x):
                    sources = self.net(x)
                    return [s for s in sources.transpose(0, 1)]  # the views x.unbind(1) gives
        """),
        Valid("""
            import torch.nn.functional as F
            class Classifier(nn.Module):
                def forward(self, x, data_samples):
                    scores = F.softmax(self.head(x), dim=1)
                    labels = scores.argmax(dim=1, keepdim=True)
                    for sample, score, label in zip(data_samples, scores, labels):
                        sample.set_pred_score(score).set_pred_label(label)
                    return data_samples
        """),
        Valid("""
            import torch
            class Detector(nn.Module):
                def forward(self, scores):
                    keep = []
                    for image_scores in scores.flatten(1):  # a different number of keypoints per image
                        keep.append(image_scores.nonzero()[:, 0][:1024])
                    return self.describe(keep)
        """),
        Valid("""
            import torch
            def pairwise_losses(loss_func, est_targets, targets):
                batch, n_src = targets.shape[:2]
                losses = targets.new_empty(batch, n_src, n_src)
                for i, est in enumerate(est_targets.transpose(0, 1)):  # one batched loss per source pair
                    for j, ref in enumerate(targets.transpose(0, 1)):
                        losses[:, i, j] = loss_func(est, ref)
                return losses
        """),
        Valid("""
            import torch
            class VideoSR(nn.Module):
                def forward(self, x):
                    b, t, c, h, w = x.size()
                    feats = self.extract(x.view(-1, c, h, w)).view(b, t, -1, h, w)
                    aligned = []
                    for i in range(t):  # one alignment network call per frame
                        neighbour = [feats[:, i].clone()]
                        aligned.append(self.align(neighbour, feats[:, t // 2]))
                    return torch.stack(aligned, dim=1)
        """),
        Valid("""
            import torch
            class MoE(nn.Module):
                def forward(self, x, masks):
                    y = torch.zeros_like(x)
                    for mask, expert in zip(masks, self.experts):
                        token_idx, expert_idx = torch.where(mask)
                        y[token_idx] += expert(x[token_idx])
                    return y
        """),
        Valid("""
            import librosa
            import torch
            class STFT(nn.Module):
                def forward(self, x):
                    out = []
                    for i in range(x.shape[0]):
                        out.append(torch.from_numpy(librosa.stft(x[i].numpy())))
                    return torch.stack(out)
        """),
        Valid("""
            import torch
            class Extractor(nn.Module):
                def forward(self, wav):
                    pieces = [wav[b].detach().cpu() for b in range(wav.shape[0])]
                    return self.processor(pieces)
        """),
        Valid("""
            import numpy as np
            import torch
            class Matcher(nn.Module):
                def forward(self, costs):
                    costs = costs.detach().cpu()
                    return [np.argsort(c.numpy(), axis=1) for c in costs]
        """),
        Valid("""
            import torch
            from torch import nn
            class Decoder(nn.Module):
                def forward(self, x, h, c):
                    for t in range(x.shape[1]):
                        h[0], c[0] = self.cells[0](x[:, t], (h[0], c[0]))
                    return h, c
        """),
        Valid("""
            import torch
            from torch import nn
            class QRNN(nn.Module):
                def forward(self, f, x):
                    h = torch.zeros_like(x[0])
                    for i in range(f.shape[0]):
                        h = f[i] * h + (1 - f[i]) * x[i]
                    return h
        """),
        Valid("""
            import torch
            from torch import nn
            class ForgetMult(nn.Module):
                def forward(self, f, x, hidden):
                    result, prev = [], hidden
                    for i in range(x.shape[0]):
                        h_t = x[i]
                        if prev is not None:
                            h_t = h_t + (1 - f[i]) * prev
                        result.append(h_t)
                        prev = h_t
                    frames = [x[:, t, ...] for t in range(x.shape[1])]
                    return torch.stack(result), frames
        """),
        Valid("""
            import torch
            from torch import nn
            class Head(nn.Module):
                def forward(self, hidden_states):
                    scores = []
                    for layer_id in range(hidden_states.shape[0]):
                        scores.append(self.cls_branches[layer_id](hidden_states[layer_id]))
                    return torch.stack(scores)
        """),
        Valid("""
            import torch
            from torch import nn
            class Detector(nn.Module):
                def forward(self, boxes, scores):
                    kept = []
                    for i in range(boxes.shape[0]):
                        kept.append(boxes[i][scores[i] > 0.5])
                    return kept
        """),
        Valid("""
            import torch
            from torch import nn
            class Pad(nn.Module):
                def forward(self, tokens, use_list):
                    if use_list:
                        pad = [0, 0, 0]
                    else:
                        pad = torch.zeros(3)
                    return [p for p in pad]
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    for layer in self.layers:
                        x = layer(x)
                    return x
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    for i in range(self.num_layers):
                        x = self.blocks[i](x)
                    return x
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    for c in range(3):
                        x[:, c] = x[:, c] * self.scale[c]
                    return x
        """),
        Valid("""
            import torch
            class FPN(nn.Module):
                def forward(self, features):
                    outs = []
                    for i, f in enumerate(features):
                        outs.append(self.convs[i](f))
                    return outs
        """),
        Valid("""
            import torch
            class Head(nn.Module):
                def forward(self, xs):
                    return [conv(x) for conv, x in zip(self.convs, xs)]
        """),
        Valid("""
            import torch
            class GhostBatchNorm(nn.Module):
                def forward(self, x):
                    chunks = x.chunk(x.shape[0] // self.virtual_batch_size, 0)
                    return torch.cat([self.bn(x_) for x_ in chunks], dim=0)
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    outs = []
                    for chunk in x.split(256):
                        outs.append(self.mlp(chunk))
                    return torch.cat(outs).view(x.shape)
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    outs = []
                    for h in range(x.shape[1]):
                        outs.append(self.heads[h](x))
                    return outs
        """),
        Valid("""
            import torch
            def detection_loss(preds, targets):
                total = 0
                for b in range(len(targets)):
                    total = total + preds[b][targets[b]['labels']].sum()
                return total
        """),
        Valid("""
            import torch
            def collate(x):
                return [row for row in x.view(x.shape[0], -1)]
        """),
        Valid("""
            import torch
            for x, y in loader:
                for row in x.view(x.shape[0], -1):
                    pass
                loss = model(x).backward()
        """),
        Valid("""
            import torch
            class RNN(nn.Module):
                def forward(self, x, h):
                    outs = []
                    for t in range(x.shape[1]):
                        h = self.cell(x[:, t], h)
                        outs.append(h)
                    return torch.stack(outs, 1)
        """),
        Valid("""
            import torch
            class Decoder(nn.Module):
                def forward(self, x, state):
                    B, T, C = x.shape
                    for t in range(T):
                        out, state = self.step(x[:, t], state)
                    return out
        """),
        Valid("""
            import torch
            def collate_loss(batch):
                tensor = torch.zeros(len(batch), 3)
                for j in range(len(batch[0][0])):
                    tensor[j] += batch[j][0][0]
                return tensor
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    outs = []
                    for i in range(0, x.shape[0], 1024):
                        outs.append(self.mlp(x[i:i + 1024]))
                    return torch.cat(outs)
        """),
        Valid("""
            import torch
            def move_loss(value, device):
                if isinstance(value, torch.Tensor):
                    return value.to(device)
                return type(value)(move_loss(v, device) for v in value)
        """),
        Valid("""
            import torch
            class CellRNN(nn.Module):
                def forward(self, x):
                    h = x.new_zeros(x.shape[0], self.hidden)
                    outs = []
                    for x_t in x.unbind(1):
                        h = self.cell(x_t, h)
                        outs.append(h)
                    return torch.stack(outs, 1)
        """),
        Valid("""
            import torch
            class IIR(nn.Module):
                def forward(self, x):
                    y = torch.zeros_like(x)
                    for t in range(1, x.shape[1]):
                        y[:, t] = self.a * y[:, t - 1] + x[:, t]
                    return y
        """),
        Valid("""
            import torch

            class DetectionLoss:
                def __call__(self, preds, targets):
                    return self.build_targets(preds, targets.cpu().numpy())  # masks of a numpy array

                def build_targets(self, preds, targets):
                    counts = []
                    for i in range(preds[0].shape[0]):
                        counts.append((targets[:, 0] == i).sum())
                    return counts
        """),
    )
    invalid = (
        Invalid("""
            import torch
            from torch import nn

            class AblationLayer(nn.Module):
                def __call__(self, x):
                    output = x.clone()
                    for i in range(output.size(0)):  # expect: TL202
                        output[i, self.indices[i], :] = 0  # an item of a list of indices, not a layer
                    return output
        """),
        Invalid("""
            import torch
            from torch import nn

            class Assigner:
                def assign(self, cost, ks):
                    match = torch.zeros_like(cost)
                    for g in range(cost.shape[0]):  # expect: TL202
                        match[g, torch.topk(cost[g], int(ks[g]), largest=False).indices] = 1
                    return match

            class Head(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.assigner = Assigner()

                def forward(self, cost, ks):  # runs the held object's method on every call
                    return self.assigner.assign(cost.float(), ks.long()).sum()
        """),
        Invalid("""
            import torch

            class DetectionLoss:
                def __call__(self, preds, targets):
                    return self.build_targets(preds, targets)

                def build_targets(self, preds, targets):
                    counts = []
                    for i in range(preds[0].shape[0]):  # expect: TL202
                        counts.append((targets[:, 0] == i).sum())  # a mask of the parameter per image
                    return torch.stack(counts)
        """),
        Invalid("""
            from torch import nn

            class MultiSimilarityLoss(nn.Module):
                def forward(self, feats, labels):
                    sim = feats @ feats.t()
                    losses = []
                    for i in range(feats.size(0)):  # expect: TL202
                        pos = sim[i][labels == labels[i]]
                        neg = sim[i][labels != labels[i]]
                        losses.append(pos.neg().exp().sum().log1p() + neg.exp().sum().log1p())
                    return sum(losses) / feats.size(0)  # summed into one tensor: not ragged results
        """),
        Invalid("""
            import pytorch_lightning as pl
            import torch.nn.functional as F

            class Classifier(pl.LightningModule):
                def training_step(self, batch, batch_idx):
                    x, y = batch  # what the loader gave: y goes to F.cross_entropy, a tensor
                    logits = self.net(x)
                    loss = F.cross_entropy(logits, y)
                    for label in y:  # expect: TL202
                        self.class_counts[int(label)] += 1
                    return loss
        """),
        Invalid("""
            import torch

            def train(model, loader, optimizer):
                correct = 0
                for batch in loader:
                    batch = {k: v.cuda() for k, v in batch.items()}
                    out = model(**batch)  # a Hugging Face model: out.logits is a tensor
                    out.loss.backward()
                    optimizer.step()
                    for p, y in zip(out.logits.argmax(-1), batch["labels"]):  # expect: TL202
                        correct += int(p == y)
        """),
        Invalid("""
            import torch
            from torch import nn

            class TemporalSmoothness(nn.Module):
                def forward(self, x):
                    steps = x.shape[1]
                    diffs = []
                    for t in range(steps - 1):  # expect: TL202
                        diffs.append((x[:, t + 1] - x[:, t]).abs().mean())
                    return torch.stack(diffs).sum()
        """),
        Invalid("""
            import torch
            from torch import nn

            class CenterLoss(nn.Module):
                def __init__(self, num_classes, dim):
                    super().__init__()
                    self.centers = nn.Parameter(torch.randn(num_classes, dim))

                def forward(self, x, labels):
                    loss = 0
                    for i in range(x.size(0)):  # expect: TL202
                        loss = loss + (x[i] - self.centers[labels[i]]).pow(2).sum()  # a row of a parameter, not a layer
                    return loss / x.size(0)
        """),
        Invalid("""
            import torch
            from torch import nn

            class SpanLoss(nn.Module):
                def forward(self, logits, starts, ends):
                    starts, ends = starts.long(), ends.long()
                    total = 0
                    for i, (s, e) in enumerate(zip(starts, ends)):  # expect: TL202
                        total = total + logits[i, s] - logits[i, e]
                    return total
        """),
        Invalid("""
            import torch
            import torch.nn.functional as F

            def train(model, loader, optimizer):
                for x, y, lengths in loader:
                    mask = torch.ones_like(y)
                    for i in range(y.shape[0]):  # expect: TL202
                        mask[i, lengths[i]:] = 0  # a write per sample inside the training step
                    loss = (F.cross_entropy(model(x), y, reduction="none") * mask).mean()
                    loss.backward()
                    optimizer.step()
        """),
        Invalid("""
            import torch
            import torch.nn.functional as F

            class Classifier(LightningModule):
                def training_step(self, batch, batch_idx):
                    x, labels = batch
                    labels = labels.view(-1)
                    rows = [self.yes if label == 1 else self.no for label in labels]  # expect: TL202
                    return F.binary_cross_entropy_with_logits(self(x), torch.stack(rows))
        """),
        Invalid("""
            import torch
            from torch import nn

            def copy_rows_(cache, idx, val):
                batch, _ = idx.shape
                for i in range(batch):  # expect: TL202
                    cache[i].index_copy_(0, idx[i], val[i])
                return cache

            class KVCache(nn.Module):
                def forward(self, pos: torch.Tensor, k: torch.Tensor):
                    return copy_rows_(torch.zeros_like(k), pos, k)
        """),
        Invalid("""
            import torch

            def rank_by_class(labels, ious, inds):
                pos_labels = labels[inds]
                most = pos_labels.bincount().max()  # only a tensor has .bincount()
                for label in pos_labels.unique():  # expect: TL202
                    ious[inds[pos_labels == label]] += most
                return ious

            def pisa_loss(labels, ious, inds):
                return rank_by_class(labels, ious, inds).mean()
        """),
        Invalid("""
            import torch

            def pit_loss(losses, perms):  # losses: (batch, permutations)
                best, best_idx = torch.min(losses, dim=1)
                chosen = torch.stack([perms[m] for m in best_idx])  # expect: TL202
                return best.mean(), chosen
        """),
        Invalid("""
            import torch
            import torch.nn.functional as F

            def crop(x, starts, size=4, pad=False):
                if pad and x.shape[-1] < size:
                    x = F.pad(x, (0, size))  # a tensor on this path, a parameter used like one on the other
                out = torch.zeros_like(x[:, :, :size])
                for i in range(x.size(0)):  # expect: TL202
                    out[i] = x[i][:, starts[i]:starts[i] + size]
                return out

            class Model(nn.Module):
                def forward(self, x, starts):
                    return crop(x, starts)
        """),
        Invalid("""
            import torch
            from torch import nn

            class OneVsRest(nn.Module):
                def forward(self, logits, labels):
                    total = 0
                    for c in range(logits.size(1)):  # expect: TL202
                        total = total + self.binary(logits[:, c], (labels == c + 1).float())
                    return total
        """),
        Invalid("""
            import torch
            from torch import nn

            class Smoothness(nn.Module):
                def forward(self, x):
                    loss = 0.0
                    for i in range(x.shape[0]):  # expect: TL202
                        window = x[i:i + 1]  # a slice, not the previous element
                        loss = loss + (window - window.mean()).pow(2).sum()
                    return loss
        """),
        Invalid("""
            import torch
            from torch import nn

            class GPT(nn.Module):
                def forward(self, tokens, text_lengths, targets):
                    max_len = text_lengths.max()  # a reduction only arrays have: a tensor
                    logits = self.head(self.embed(tokens[:, :max_len]))
                    for idx, l in enumerate(text_lengths):  # expect: TL202
                        targets[idx, l + 1:] = -1
                    return logits, targets
        """),
        Invalid("""
            import torch
            from torch import nn

            class Vocoder(nn.Module):
                def forward(self, wav, starts):
                    return segment(wav, starts, 4)

            def segment(x, starts, size):
                segments = torch.zeros_like(x[:, :, :size])
                for i in range(x.size(0)):  # expect: TL202
                    segments[i] = x[i][:, starts[i]:starts[i] + size]
                return segments
        """),
        Invalid("""
            import torch
            from itertools import groupby
            class GreedyCTC(nn.Module):
                def forward(self, enc_out):
                    ids = self.ctc(enc_out).argmax(-1)
                    return torch.stack([x[0] for x in groupby(ids[0])])  # expect: TL202
        """),
        Invalid("""
            import torch
            class ChannelMean(nn.Module):
                def forward(self, x, num_mic):
                    batch_size = x.shape[0]
                    means = [
                        x[b, : num_mic[b]].mean(0)
                        for b in range(batch_size)  # expect: TL202
                    ]
                    return torch.stack(means)
        """),
        Invalid("""
            import torch
            class TTSLoss(nn.Module):
                def forward(self, mel_out, mel_target, mel_length):
                    loss = 0
                    for i in range(mel_target.shape[0]):  # expect: TL202
                        loss = loss + self.mel_loss(mel_out[i, : mel_length[i]], mel_target[i, : mel_length[i]])
                    return loss
        """),
        Invalid("""
            import torch
            class FocalLoss(nn.Module):
                def forward(self, y_pred, y_true):
                    losses = []
                    for cls in range(y_pred.size(1)):  # expect: TL202
                        losses.append(self.focal_loss_fn(y_pred[:, cls], (y_true == cls).long()))
                    return torch.stack(losses).sum()
        """),
        Invalid("""
            import torch
            from torch import nn
            class ClassBalanced(nn.Module):
                def forward(self, logits, labels):
                    total = 0
                    for c in labels.unique():  # expect: TL202
                        total = total + logits[labels == c].mean()
                    return total
        """),
        Invalid("""
            import torch
            class Quantize(nn.Module):
                def forward(self, x):
                    q = torch.zeros_like(x)
                    for i in range(x.shape[0]):  # expect: TL202
                        for level in range(1, self.levels):
                            q[i][x[i] >= self.boundaries[level - 1]] = level
                    return q
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    out = []
                    for row in x:  # expect: TL202
                        out.append(self.proj(row))
                    return torch.stack(out).view(x.shape[0], -1)
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    B, T, C = x.shape
                    y = x.new_zeros(B)
                    for b in range(B):  # expect: TL202
                        y[b] = x[b].norm()
                    return y
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, img, batch_idx):
                    counts = [(batch_idx == i).sum() for i in range(img.shape[0])]  # expect: TL202
                    return torch.stack(counts)
        """),
        Invalid("""
            import torch
            def l1_loss(pred, target):
                total = 0.0
                for i in range(pred.size(0)):  # expect: TL202
                    total = total + (pred[i] - target[i]).abs().sum()
                return total
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    return torch.stack([self.f(x[i]) for i in range(x.size(0))])  # expect: TL202
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    out = []
                    for b in range(x.shape[0]):  # expect: TL202
                        feat = x[b]
                        out.append(self.head(feat))
                    return torch.stack(out)
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x, y):
                    n = len(x)
                    s = x.new_zeros(n)
                    for i in range(n):  # expect: TL202
                        s[i] = (x[i] * y[i]).sum()
                    return s
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    x = x.flatten(1)
                    return [self.g(v) for i, v in enumerate(x.unbind(0))]  # expect: TL202
        """),
        Invalid("""
            import torch

            class PrototypeLoss:  # a loss object: its __call__ runs every step
                def __call__(self, x, y):
                    classes = torch.unique(y)
                    protos = torch.stack([self.memory[c] for c in self.keys])  # this `c` is the comprehension's own
                    loss = None
                    for i in range(classes.size(0)):  # expect: TL202
                        c = classes[i]
                        members = x.index_select(0, torch.nonzero(y == c).squeeze(1))
                        l_c = (members - protos[i]).pow(2).sum()
                        loss = l_c if loss is None else loss + l_c  # a running sum started on the first step
                    return loss
        """),
        Invalid("""
            import torch
            from torch import nn
            from .groups import group_ids

            class GroupBalancedLoss(nn.Module):
                def forward(self, logits, targets):
                    loss = logits.new_zeros(())
                    for g in group_ids(targets).unique():  # expect: TL202
                        m = targets == g  # `.unique()` is a tensor's method: numpy arrays have none
                        loss = loss + self.ce(logits[m], targets[m])
                    return loss
        """),
        Invalid("""
            import torch
            from torch import nn

            class SegmentLoss(nn.Module):
                def forward(self, preds, masks, indices):
                    loss = torch.zeros(1, device=masks.device)
                    for i, pred in enumerate(preds):  # the few detection layers
                        b, gi = indices[i]
                        j = pred[b, gi].sigmoid().argsort()  # `j` holds an order before the loop
                        b, gi = b[j], gi[j]
                        for bi in b.unique():  # expect: TL202
                            j = b == bi  # a fresh mask per image, not a state carried over
                            loss += self.mask_loss(pred[b[j], gi[j]], masks[bi])
                    return loss
        """),
        Invalid("""
            import torch
            import torch.nn.functional as F
            from lightning import LightningModule

            class Classifier(LightningModule):
                def __init__(self, backbone, num_classes):
                    super().__init__()
                    self.backbone = backbone
                    self.register_buffer("class_counts", torch.zeros(num_classes))

                def training_step(self, batch, batch_idx):
                    x, y = batch
                    loss = F.cross_entropy(self.backbone(x), y)
                    for i in range(y.shape[0]):  # expect: TL202
                        self.class_counts[y[i]] += 1  # one small kernel per sample: torch.bincount
                    return loss
        """),
    )

    def visit_For(self, node: cst.For) -> None:
        walked = self._walks_tensor(node.iter, node.target, [node.body])
        if walked is not None:
            step = self._reads_elements(node.iter, node.target, [node.body])
            self.report(node, hot_when=self._hot_when(walked, step, own_loop=self.ctx.scope))

    def visit_CompFor(self, node: cst.CompFor) -> None:
        holder = self.ctx.parent
        body: List[cst.CSTNode] = list(node.ifs)
        if isinstance(holder, _COMPREHENSIONS):
            if not node.ifs and _takes_views(self.ctx, holder.elt, node):
                return
            if method_call(holder.elt, "cpu", "numpy") is not None:
                return  # [x[i].cpu() for i in ...] splits the batch into host pieces for a library
            body.append(holder.elt)
        elif isinstance(holder, cst.DictComp):
            body.extend((holder.key, holder.value))
        walked = self._walks_tensor(node.iter, node.target, body)
        if walked is not None:
            step = self._reads_elements(node.iter, node.target, body)
            # at the loop variable: a CompFor's span starts with the whitespace before `for`,
            # which ends the previous line when the comprehension is split over lines
            self.report(node.target, hot_when=self._hot_when(walked, step))

    def _hot_when(
        self, parameters: Tuple[str, ...], step: bool, own_loop: Optional[Scope] = None
    ) -> Callable[[Scope], bool]:
        """Model code; in a training step (not the step's own loop, ``own_loop`` for a ``for``)
        only a loop that reads or writes elements (``step``); with ``parameters``, also only if
        the file's calls pass tensors for them."""
        function = self.ctx.scope.function

        def hot(scope: Scope) -> bool:
            kind = scope.hot_kind_of()
            inside = kind == MODEL or step and kind == STEP and scope.hot_source() is not own_loop
            return inside and all(self.ctx.parameter_kind(function, name) == TENSOR for name in parameters)

        return hot

    def _reads_elements(self, iterable: cst.BaseExpression, target: cst.BaseExpression, body) -> bool:
        """Does each step read an element's value on the host (a test of it, ``int()`` or
        ``.item()`` of it), compare a whole tensor with it (a mask per element) or write a
        tensor's slot by the loop index? Training-step code also walks batches for host work
        (caching, logging per item, per-image post-processing); only these loops do per-element
        tensor work there."""
        names = list(target_names(target))
        if _range_stop(self.ctx, iterable) is not None:
            indices, elements = set(names), set()
        elif isinstance(iterable, cst.Call) and self.ctx.qualname(iterable.func) == "builtins.enumerate":
            indices, elements = set(names[:1]), set(names[1:])
        else:
            indices, elements = set(), set(names)
        variables = indices | elements
        stack: List[cst.CSTNode] = list(body)
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind in (cst.Assert, cst.Raise):
                continue  # a check that fails rarely, or its message
            stack.extend(iter_children(node))
            read = _host_read(self.ctx, node) if kind is cst.Call else None
            if (
                kind in (cst.If, cst.IfExp, cst.While) and _element_value(node.test, elements, variables)
                or read is not None and _element_value(read, elements, variables)
                or kind in (cst.AssignTarget, cst.AugAssign) and isinstance(node.target, cst.Subscript)
                and any(self._indexes_by(node.target, index) for index in indices)
                or kind is cst.Comparison and any(self._masks_by(node, name) for name in variables)
            ):
                return True
        return False

    def _walks_tensor(
        self, iterable: cst.BaseExpression, target: cst.BaseExpression, body
    ) -> Optional[Tuple[str, ...]]:
        """Does the loop walk a tensor element by element? None if not; else the parameters of
        unknown kind it walks that must turn out tensors (``()``: none need to)."""
        if self.ctx.in_definition():
            return None
        iterated = _iterated(self.ctx, iterable)
        if any(self._is_tensor_rows(candidate) for candidate in iterated):
            return self._walks_rows(iterated, target, body)
        stop = _range_stop(self.ctx, iterable)
        if stop is None or not isinstance(target, cst.Name):
            return None
        return self._walks_dimension(stop, target, body)

    def _walks_rows(
        self, iterated: List[cst.BaseExpression], target: cst.BaseExpression, body
    ) -> Optional[Tuple[str, ...]]:
        """``for row in x``, ``zip(x, y)``: is each step per-element work on a tensor's rows?"""
        if any(isinstance(c, cst.Name) and self.ctx.needed_on_host(c.value) for c in iterated):
            return None  # each element goes to numpy/scipy (a matching per image): no vectorised form
        if any(_submodules(self.ctx, candidate) for candidate in iterated):
            return None  # zip(masks, self.experts): one module per step
        if any(
            self.ctx.tensor_kind(candidate) == NOT
            or isinstance(candidate, cst.Name) and self.ctx.non_tensor_on_some_path(candidate.value)
            for candidate in iterated
        ):
            return None  # zip(pitch_list, lengths), zip(samples, scores): each step takes an item of a Python list
        names = set(target_names(target))
        nodes = [node for part in body for node in descendants(part)]
        if _packs_only(body, names):
            return None  # sample.set_pred_score(score) per row: stored, not computed on
        if _walks_records(nodes, names) or self._to_host(nodes, names) or (
            not any(_walked_dimension(candidate) in (None, 0) for candidate in iterated)
            and _runs_module_on(self.ctx, nodes, names)
        ):
            return None
        # `for x_t in x.unbind(1): h = cell(x_t, h)` is a recurrence
        return None if _recurrence(self.ctx, body, nodes, target) or self._ragged(nodes, names) else ()

    def _walks_dimension(self, stop: cst.BaseExpression, target: cst.Name, body) -> Optional[Tuple[str, ...]]:
        """``for i in range(x.shape[0])``: does the body index (or mask) a tensor by ``i``?"""
        variable = target.value
        sized = self.ctx.sized(stop)
        if sized is None:
            return None
        walked = _unsubscripted(sized)
        if self._unknown_parameter(walked) and not _is_len(self._length(stop)):
            needed = {walked.value}  # `range(t.shape[0])` (or `range(t[0].shape[0])`) of a helper's parameter `t`
        elif self.ctx.tensor_kind(sized) in (TENSOR, HOST) and self._evident_tensor(sized, stop):
            needed: Set[str] = set()
        else:
            return None
        nodes = [node for part in body for node in descendants(part)]
        if (
            _recurrence(self.ctx, body, nodes, target) or self._ragged(nodes, {variable})
            or _per_layer(self.ctx, nodes, variable)
            or _walks_records(nodes, {variable})
            or self._to_host(nodes, {variable})
            or (
                self.ctx.dimension(stop) != 0 and _runs_module_on(self.ctx, nodes, {variable})
                and not any(self._masks_by(node, variable) for node in nodes)
            )
        ):
            return None
        if not any(self._indexes_by(node, variable) or self._masks_by(node, variable) for node in nodes):
            # `t[i]`, or `t[:, 0] == i`, of a helper's parameter `t`: per element if the file's calls pass tensors
            indexed = {
                node.value.value for node in nodes
                if isinstance(node, cst.Subscript) and self._unknown_parameter(node.value)
                and _subscripted_by(node, variable)
            } | {name for node in nodes for name in self._parameters_masked_by(node, variable)}
            if not indexed:
                return None
            needed |= indexed
        return tuple(sorted(needed))

    def _unknown_parameter(self, node: cst.BaseExpression) -> bool:
        """Is ``node`` a parameter of the current function whose kind the function cannot tell?"""
        return (
            isinstance(node, cst.Name) and is_parameter(self.ctx.scope.function, node.value)
            and self.ctx.tensor_kind(node) is None and self.ctx.value_of(node.value) is None
        )

    def _is_tensor_rows(self, node: cst.BaseExpression) -> bool:
        """``x``, ``x[0]``, ``x.unbind(...)``, ``labels.unique()``: a tensor with evidence
        that it is one (a name used like a tensor, a torch call's result). Chunks
        (``x.split(n)``, ``torch.chunk(x, k)``, also through names and slices of them:
        ``pieces = x.split(n)`` ... ``pieces[:k]``) are a few large pieces, not rows."""
        if self._chunks(node):
            return False
        unbind = method_call(node, "unbind")
        base = unbind.value if unbind is not None else node
        while isinstance(base, cst.Subscript):
            base = base.value
        if not isinstance(base, (cst.Name, cst.Call)):
            return False
        return self.ctx.tensor_kind(base) == HOST or self.ctx.surely_tensor(base)  # a host tensor's kind is evidence

    def _chunks(self, node: Optional[cst.BaseExpression], depth: int = 0) -> bool:
        """Is ``node`` a tensor's chunks, or a slice of them, directly or through names?"""
        while isinstance(node, cst.Subscript) and all(isinstance(part.slice, cst.Slice) for part in node.slice):
            node = node.value
        if isinstance(node, cst.Name):
            return depth < 3 and self._chunks(self.ctx.value_of(node.value), depth + 1)
        return node is not None and method_call(node, *_CHUNKS) is not None or (
            isinstance(node, cst.Call) and (self.ctx.qualname(node.func) or "").replace("torch.", "", 1) in _CHUNKS
        )

    def _ragged(self, nodes: List[cst.CSTNode], names: Set[str]) -> bool:
        """Does the loop select a data-dependent number of items per element (``x[i][mask]``,
        ``nonzero``, ``unique``) and collect them in a list it never joins into a tensor
        (``torch.cat``/``torch.stack``)? Such per-item results (boxes per image) have different
        sizes and no dense form. Or does it copy each item into a slice of the item's own size
        (``pad[i, : img.shape[1], : img.shape[2]].copy_(img)``, ``target[b, : len(tokens)]``): items
        of different sizes padded into one batch? (``names``: the loop's variables.)"""
        varying = names | {name for node in nodes if isinstance(node, cst.Assign) for name in _assigned_names(node)}
        if any(  # `: img.shape[1]`, `: img.size(1)`, `: len(tokens)`
            isinstance(node, cst.Slice) and dotted_name(dimension_source(node.upper)) in varying for node in nodes
        ):
            return True
        masks = {  # `m = scores[i] > t`, `keep = nms(boxes[i], scores[i], iou)`: data-sized selections
            name for node in nodes if isinstance(node, cst.Assign) and self._data_sized(node.value)
            for name in _assigned_names(node)
        }
        if not any(_selects(node, masks) for node in nodes):
            return False
        appended = {
            node.func.value.value for node in nodes
            if method_call(node, "append") is not None and isinstance(node.func.value, cst.Name)
        }
        return bool(appended - self.ctx.joined_lists())

    def _data_sized(self, value: cst.BaseExpression) -> bool:
        """A mask or index list whose size depends on the data: a comparison, ``nonzero``, NMS."""
        return isinstance(value, cst.Comparison) or _selects(value, set()) or (
            isinstance(value, cst.Call) and (self.ctx.qualname(value.func) or "") in _NMS
        )

    def _to_host(self, nodes: List[cst.CSTNode], targets: Set[str]) -> bool:
        """Is each element handed to a library that takes host arrays (``librosa.stft(x[i].numpy())``)?
        Host code per element has no vectorised torch form."""
        return any(
            isinstance(node, cst.Call) and self.ctx.host_library_call(node)
            and any(name in targets for arg in node.args for name in _names(arg.value))
            for node in nodes
        )

    def _evident_tensor(self, sized: cst.BaseExpression, stop: cst.BaseExpression) -> bool:
        """``x.shape[0]`` / ``x.size(0)`` prove ``x`` is a tensor; ``len(x)`` needs more."""
        return not _is_len(self._length(stop)) or self._is_tensor_rows(sized)

    def _length(self, stop: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        """What a ``range`` stop holds: itself, or the value of the name it is."""
        return stop if not isinstance(stop, cst.Name) else self.ctx.value_of(stop.value)

    def _masks_by(self, node: cst.CSTNode, variable: str) -> bool:
        """``batch_idx == i`` (or ``== i + 1``): a whole-tensor comparison with the loop variable,
        one mask per element."""
        return any(self.ctx.tensor_kind(other) in (TENSOR, HOST) for other in _compared_with(node, variable))

    def _parameters_masked_by(self, node: cst.CSTNode, variable: str) -> Tuple[str, ...]:
        """``t[:, 0] == i`` of a helper's parameter ``t`` whose kind the function cannot tell:
        a mask per element if ``t`` turns out a tensor."""
        compared = (_unsubscripted(other) for other in _compared_with(node, variable))
        return tuple(name.value for name in compared if self._unknown_parameter(name))

    def _indexes_by(self, node: cst.CSTNode, variable: str) -> bool:
        return (
            isinstance(node, cst.Subscript) and self.ctx.tensor_kind(node.value) == TENSOR
            and _subscripted_by(node, variable)
        )


def _host_read(ctx, call: cst.Call) -> Optional[cst.BaseExpression]:
    """What ``int(v)``/``float(v)``/``bool(v)`` or ``v.item()``/``v.tolist()`` reads on the host."""
    if len(call.args) == 1 and ctx.qualname(call.func) in HOST_READ_BUILTINS:
        return call.args[0].value
    method = method_call(call, "item", "tolist")
    return method.value if method is not None else None


def _element_value(node: cst.BaseExpression, elements: Set[str], variables: Set[str]) -> bool:
    """Is ``node`` computed from an element the loop is at: one of ``elements``, an item a loop
    variable picks (``x[i]``), a method's result or arithmetic or comparison of those
    (``logits[i].argmax() == y[i]``; ``is``/``in`` tests excluded)?"""
    kind = type(node)
    if kind is cst.Name:
        return node.value in elements
    if kind is cst.Subscript:
        return any(_subscripted_by(node, name) for name in variables) or _element_value(node.value, elements, variables)
    if kind is cst.Call:
        return isinstance(node.func, cst.Attribute) and _element_value(node.func.value, elements, variables)
    if kind is cst.Comparison:
        if any(isinstance(part.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for part in node.comparisons):
            return False
        return any(_element_value(side, elements, variables) for side in (node.left, *(p.comparator for p in node.comparisons)))
    if kind in (cst.BinaryOperation, cst.BooleanOperation):
        return _element_value(node.left, elements, variables) or _element_value(node.right, elements, variables)
    if kind is cst.UnaryOperation:
        return _element_value(node.expression, elements, variables)
    return False


def _is_len(node: Optional[cst.BaseExpression]) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len"


def _compared_with(node: cst.CSTNode, variable: str) -> Tuple[cst.BaseExpression, ...]:
    """What a single comparison compares the loop variable (or ``i + 1``) with: ``batch_idx`` of
    ``batch_idx == i``."""
    if not isinstance(node, cst.Comparison) or len(node.comparisons) != 1:
        return ()
    left, right = node.left, node.comparisons[0].comparator
    return tuple(other for this, other in ((left, right), (right, left)) if _arithmetic_of(this, variable))


def _unsubscripted(node: cst.BaseExpression) -> cst.BaseExpression:
    """``t`` of ``t[0]``, ``t[:, 0]``, ``t[0][1]``."""
    while isinstance(node, cst.Subscript):
        node = node.value
    return node


def _subscripted_by(node: cst.Subscript, variable: str) -> bool:
    """Does ``node`` index with the loop variable (``x[i]``, ``out[:, i + 1]``)?"""
    return any(
        isinstance(inner, cst.Name) and inner.value == variable
        for element in node.slice
        for inner in descendants(element)
    )


def _recurrence(ctx, body: Sequence[cst.CSTNode], nodes: List[cst.CSTNode], target: cst.BaseExpression) -> bool:
    """Does each iteration depend on the previous one, so the loop is inherently sequential?
    A state fed back through a call before the iteration rebinds it (``h = self.cell(x[:, t],
    h)``, also a state held in a list: ``h[0], c[0] = cell(x[:, t], (h[0], c[0]))``; not ``j``
    of ``j = b == bi`` ... ``loss(pred[j])``, computed afresh first), a state computed from its own old
    value (``h = f[t] * h + x[t]``, or through other names: ``h_t = x[t] + f[t] * prev`` ...
    ``prev = h_t``; also a sum whose change depends on the state: ``v = v + x[t]`` ... ``spike =
    (v >= 1.0).float()`` ... ``v = v - spike``), or a neighbour read of what the loop writes
    (``y[:, t] = a * y[:, t - 1] + x[:, t]``, ``y[t] += y[t - 1] * w[t]``; a slice ``x[t:t + 1]``
    is no neighbour). Running sums (``total += ...``, ``total = total + ...``) do not count."""
    assigned = set()  # names the body rebinds that already held a value before the loop
    written = set()  # names the body writes items of (``y[:, t] = ...``)
    for node in nodes:
        if isinstance(node, cst.AssignTarget):
            assigned.update(name for name in _state_names(node.target) if ctx.bound(name))
        if isinstance(node, (cst.AssignTarget, cst.AugAssign)) and isinstance(node.target, cst.Subscript) \
                and isinstance(node.target.value, cst.Name):
            written.add(node.target.value.value)  # `y[t] = ...`, `y[t] += y[t - 1] * w[t]`
    if _carried(body, assigned):
        return True
    in_lines: Set[int] = set()
    rebound: Set[str] = set()  # states the iteration has given a new value so far
    for part in body:
        for line in simple_statements(part):
            line_nodes = list(descendants(line))
            in_lines.update(map(id, line_nodes))
            if _fed_to_call(ctx, line_nodes, assigned - rebound):
                return True
            rebound.update(name for node in line_nodes if isinstance(node, cst.AssignTarget) for name in _state_names(node.target))
    if _fed_to_call(ctx, [node for node in nodes if id(node) not in in_lines], assigned):
        return True  # a call in a loop or branch header, or in a comprehension
    for node in nodes:
        if (
            isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value in written
            and isinstance(target, cst.Name)
            and any(_neighbour(inner, target.value) for element in node.slice for inner in descendants(element))
        ):
            return True
    return False


def _fed_to_call(ctx, nodes: List[cst.CSTNode], states: Set[str]) -> bool:
    """Is one of ``states`` passed to a call (not a torch function) among ``nodes``: a state
    fed back through a cell (``h = self.cell(x[:, t], h)``)?"""
    return any(
        isinstance(node, cst.Call) and not (ctx.qualname(node.func) or "").startswith("torch.")
        and any(name in states for arg in node.args for name in _names(arg.value))
        for node in nodes
    )


def _neighbour(node: cst.CSTNode, variable: str) -> bool:
    """``t - 1`` or ``t + 1`` for the loop variable ``t``."""
    return (
        isinstance(node, cst.BinaryOperation)
        and isinstance(node.operator, (cst.Subtract, cst.Add))
        and isinstance(node.left, cst.Name)
        and node.left.value == variable
        and isinstance(node.right, cst.Integer)
        and int(node.right.value) != 0
    )


def _arithmetic_of(node: cst.BaseExpression, variable: str) -> bool:
    """Is ``node`` the loop variable, or arithmetic of it with number literals (``c + 1``)?"""
    if isinstance(node, cst.Name):
        return node.value == variable
    if isinstance(node, cst.BinaryOperation):
        return all(
            _arithmetic_of(side, variable) or isinstance(side, (cst.Integer, cst.Float))
            for side in (node.left, node.right)
        ) and variable in set(_names(node))
    return False


def _walks_records(nodes: List[cst.CSTNode], names: Set[str]) -> bool:
    """Does each step read a record by key, a loop target (``img_meta["img_shape"]``) or the
    item a loop index picks (``metas[i]["pad_shape"]``)? The loop then walks host metadata
    alongside the tensor (a padding mask per image size, a rescale per image), which a tensor
    row never is."""
    for node in nodes:
        if type(node) is not cst.Subscript or len(node.slice) != 1:
            continue
        key = node.slice[0].slice
        if not (isinstance(key, cst.Index) and isinstance(key.value, cst.SimpleString)):
            continue
        record = node.value
        if type(record) is cst.Subscript and len(record.slice) == 1 and isinstance(record.slice[0].slice, cst.Index):
            record = record.slice[0].slice.value  # metas[i]["pad_shape"]: the item of index i
        if type(record) is cst.Name and record.value in names:
            return True
    return False


def _packs_only(body: Sequence[cst.CSTNode], targets: Set[str]) -> bool:
    """Does the loop only hand each element to a per-item container, computing nothing on it?
    Each use is an argument of a constructor (``PixelData(data=label)``), of a setter
    (``sample.set_pred_score(score)``, also as its receiver) or of ``append``, the value of
    an attribute or item store (``sample.gt = label``), or an entry of a literal dict, tuple
    or list (``{"scores": s, "boxes": b}``)."""
    uses = 0
    stack: List[Tuple[cst.CSTNode, Optional[cst.CSTNode], Optional[cst.CSTNode]]] = [(part, None, None) for part in body]
    while stack:
        node, parent, grandparent = stack.pop()
        if isinstance(node, cst.Name) and node.value in targets:
            if not _packing_use(node, parent, grandparent):
                return False
            uses += 1
        stack.extend((child, node, parent) for child in iter_children(node))
    return uses > 0


def _packing_use(name: cst.Name, parent: Optional[cst.CSTNode], grandparent: Optional[cst.CSTNode]) -> bool:
    if isinstance(parent, cst.Arg) and isinstance(grandparent, cst.Call):
        func = grandparent.func
        called = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        return called in ("append", "extend") or called.startswith("set_") or called[:1].isupper()
    if isinstance(parent, cst.Attribute) and parent.value is name:  # the receiver of a setter
        return parent.attr.value.startswith("set_") and isinstance(grandparent, cst.Call) and grandparent.func is parent
    if isinstance(parent, cst.Assign) and parent.value is name:
        return all(isinstance(target.target, (cst.Attribute, cst.Subscript)) for target in parent.targets)
    return isinstance(parent, (cst.DictElement, cst.Element)) and parent.value is name  # {"boxes": b}, (s, b)


def _takes_views(ctx, element: cst.BaseExpression, comp_for: cst.CompFor) -> bool:
    """Does the comprehension only split a tensor into views, as ``x.unbind(k)`` does: the loop
    variable itself (``[r for r in x.transpose(0, 1)]``), or a view of a named tensor at an index
    from ``range`` (``[x[:, t] for t in range(T)]``)? Indexing with the elements of a tensor
    (``[p[m] for m in idx]``) is a gather per element."""
    target = comp_for.target
    if not isinstance(target, cst.Name):
        return False
    if isinstance(element, cst.Name):
        return element.value == target.value
    if _range_stop(ctx, comp_for.iter) is None or not (
        isinstance(element, cst.Subscript) and isinstance(element.value, cst.Name)
    ):
        return False
    parts = [part.slice for part in element.slice]
    at_variable = [p for p in parts if isinstance(p, cst.Index) and isinstance(p.value, cst.Name) and p.value.value == target.value]
    rest = [p for p in parts if isinstance(p, cst.Slice) and p.lower is p.upper is p.step is None
            or isinstance(p, cst.Index) and isinstance(p.value, cst.Ellipsis)]
    return len(at_variable) == 1 and len(at_variable) + len(rest) == len(parts)


def _carried(body: Sequence[cst.CSTNode], states: Set[str]) -> bool:
    """Does the loop ``body`` give one of ``states`` a value computed from its value at the
    start of the iteration, other than as a term of a running sum?"""
    sources: dict = {}  # name -> the names at the start of the iteration its value comes from
    assignments = (
        small for part in body for line in simple_statements(part) for small in line.body
        if isinstance(small, cst.Assign)
    )
    for node in assignments:
        read = set(_names(node.value))
        origin = set().union(*(sources.get(name, {name}) for name in read))
        for name in _assigned_names(node):
            # `v = v - spike` after `spike = (v >= threshold).float()`: the change depends on the state
            changed_by_state = any(name in sources.get(other, ()) for other in read if other != name)
            if name in states and name in origin and (
                name not in read or _fed_back(node.value, name) or changed_by_state
            ):
                return True
            sources[name] = origin
    return False


def _state_names(target: cst.BaseExpression) -> Iterable[str]:
    """Names an assignment target updates: ``h``, and ``h`` of ``h[0]`` and of ``h[0][j]``."""
    yield from target_names(target)
    values = [element.value for element in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
    for value in values:
        if isinstance(value, cst.Subscript):
            while isinstance(value, cst.Subscript):
                value = value.value
            if isinstance(value, cst.Name):
                yield value.value


def _assigned_names(node: cst.Assign) -> Set[str]:
    return {name for target in node.targets for name in target_names(target.target)}


def _fed_back(value: cst.BaseExpression, name: str) -> bool:
    """Does ``name = value`` use ``name`` other than as a term of a sum (``total + x``, also
    one started on the first step: ``x if total is None else total + x``)?"""
    terms = [value]
    while terms:
        term = terms.pop()
        if isinstance(term, cst.BinaryOperation) and isinstance(term.operator, (cst.Add, cst.Subtract)):
            terms.extend((term.left, term.right))
        elif isinstance(term, cst.IfExp) and _tests_none(term.test, name):
            terms.extend((term.body, term.orelse))
        elif not isinstance(term, cst.Name) and name in set(_names(term)):
            return True
    return False


def _tests_none(test: cst.BaseExpression, name: str) -> bool:
    """``name is None`` or ``name is not None``."""
    return (
        isinstance(test, cst.Comparison) and is_name(test.left, name) and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot))
        and is_name(test.comparisons[0].comparator, "None")
    )


def _submodules(ctx, node: cst.BaseExpression) -> bool:
    """Is ``node`` an attribute of ``self`` that is not a tensor (``self.experts``, also an item of
    one: ``self.stages[0]``): a ModuleList or list of blocks, walked one module per step?"""
    while isinstance(node, cst.Subscript):
        node = node.value
    return (
        isinstance(node, cst.Attribute) and dotted_name(node.value) == "self"
        and ctx.tensor_kind(node) not in (TENSOR, HOST)
    )


def _per_layer(ctx, nodes: List[cst.CSTNode], variable: str) -> bool:
    """Does the body pick a submodule by the loop variable and use it (``self.cls_branches[i](x)``,
    ``self.blocks[i].attn``; not a row of a parameter or buffer: ``self.centers[labels[i]]``, nor
    an item of a list of indices: ``out[i, self.indices[i]]``)? Then the loop walks layers (one
    module each), not the elements of a tensor."""
    used = {
        id(node.func if isinstance(node, cst.Call) else node.value)
        for node in nodes if isinstance(node, (cst.Call, cst.Attribute))
    }
    return any(
        isinstance(node, cst.Subscript) and id(node) in used
        and isinstance(node.value, cst.Attribute)
        and dotted_name(node.value.value) == "self"
        and any(variable in set(_names(element)) for element in node.slice)
        and ctx.tensor_kind(node.value) not in (TENSOR, HOST)
        for node in nodes
    )


def _runs_module_on(ctx, nodes: List[cst.CSTNode], targets: Set[str]) -> bool:
    """Does the body run one of the model's submodules (``self.pcd_align(feat[:, i], ref)``), not
    a method of its class, or a callable the function is given (``loss_func(est[:, i], src[:,
    j])``) on each element? Each iteration is then a whole batched call per frame, source or
    layer, not element-wise work. (Over the batch, ``range(x.shape[0])``, it is still one call
    per sample.)"""
    targets = set(targets)
    for node in nodes:  # names the body derives from the element (``nbr = [f1[:, i], f2[:, i]]``)
        if isinstance(node, cst.Assign) and targets.intersection(_names(node.value)):
            targets.update(_assigned_names(node))
    function = ctx.scope.function
    return any(
        isinstance(node, cst.Call) and any(name in targets for arg in node.args for name in _names(arg.value))
        and (
            isinstance(node.func, cst.Attribute) and is_name(node.func.value, "self") and not ctx.defined_here(node.func)
            or isinstance(node.func, cst.Name) and is_parameter(function, node.func.value)
        )
        for node in nodes
    )


def _walked_dimension(node: cst.BaseExpression) -> Optional[int]:
    """The dimension of the tensor a ``for`` walks: ``k`` of ``x.unbind(k)``, of
    ``x.transpose(0, k)`` and of ``x.permute(k, ...)``; 0 for plain rows (``for row in x``); None
    if unknown."""
    if method_call(node, "unbind") is not None:
        return dimension_index(node) if node.args else 0
    if method_call(node, "transpose", "permute") is None or not node.args:
        return 0
    dims = [literal_value(arg.value) for arg in node.args]
    if method_call(node, "permute") is not None:
        return dims[0] if isinstance(dims[0], int) else None
    if len(dims) != 2 or not all(isinstance(dim, int) for dim in dims):
        return None
    return dims[1] if dims[0] == 0 else dims[0] if dims[1] == 0 else 0


def _selects(node: cst.CSTNode, masks: Set[str]) -> bool:
    """An operation whose result size depends on the data: a boolean mask index (``x[m > 0]``,
    or by one of ``masks``, names holding such a mask or index list), ``nonzero``, ``unique``,
    ``masked_select``."""
    if method_call(node, "nonzero", "unique", "masked_select", "argwhere") is not None:
        return True
    return isinstance(node, cst.Subscript) and any(
        isinstance(inner, cst.Comparison) or isinstance(inner, cst.Name) and inner.value in masks
        for element in node.slice for inner in descendants(element)
    )


def _names(node: cst.CSTNode) -> Iterable[str]:
    return (n.value for n in descendants(node) if isinstance(n, cst.Name))


def _iterated(ctx, iterable: cst.BaseExpression) -> List[cst.BaseExpression]:
    """What a ``for`` walks: the iterable, or the arguments of ``enumerate``/``zip``/``reversed``
    and ``itertools.groupby`` (which walks its argument element by element), also nested
    (``enumerate(zip(starts, ends))``)."""
    if isinstance(iterable, cst.Call) and ctx.qualname(iterable.func) in (
        "builtins.enumerate", "builtins.zip", "builtins.reversed", "itertools.groupby",
    ):
        args = positional(iterable)
        walked = args[:1] if ctx.qualname(iterable.func) != "builtins.zip" else args
        return [inner for arg in walked for inner in _iterated(ctx, arg.value)]
    return [iterable]


def _range_stop(ctx, iterable: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    if not (isinstance(iterable, cst.Call) and ctx.qualname(iterable.func) == "builtins.range"):
        return None
    args = positional(iterable)
    if len(args) != len(iterable.args) or not 1 <= len(args) <= 2:
        return None  # with a step, the loop walks chunks (`range(0, n, chunk)`), not elements
    return args[0].value if len(args) == 1 else args[1].value
