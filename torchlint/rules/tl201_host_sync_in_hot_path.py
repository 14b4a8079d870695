"""TL201 host-sync-in-hot-path: reading a tensor's value on the host in code that runs every step."""

from __future__ import annotations

from typing import Callable, Iterable, Optional, Set, Tuple

import libcst as cst

from torchlint.context import HOST, TENSOR
from torchlint.context.facts import guards_right, log_call, off_gpu_branch
from torchlint.context.calls import is_parameter
from torchlint.context.devices import host_arguments, waiting_copy_to_host
from torchlint.context.scopes import Scope, in_model_code, walks_entries
from torchlint.context.tensors import HOST_READ_BUILTINS, host_read
from torchlint.rules.base import Invalid, Rule, Valid
from torchlint.syntax import COMPREHENSIONS, assigned_name, comparison_operands, is_name, method_call, positional
from torchlint.walker import descendants


# Methods between `.cpu()` and `.numpy()` in a conversion chain.
# Methods that keep a tensor's values (conversions, copies, layout views): `t.cpu().permute(0, 2, 1).numpy()`.
_CONVERSIONS = frozenset(
    "detach float double half int long bool clone contiguous squeeze unsqueeze permute transpose reshape view "
    "flatten".split()
)
# `math` functions, which turn a tensor argument into a Python float first (`float(t)`).
_MATH_READS = frozenset(
    f"math.{name}" for name in "sqrt exp log log2 log10 pow floor ceil fabs isnan isinf isfinite".split()
)
# Methods that keep a value in a Python container, where it stays a tensor.
_CONTAINER_METHODS = frozenset({"append", "extend", "insert", "add"})
# Arguments an API takes only in host memory (name, position): a `.cpu()` for them cannot be
# avoided, and costs nothing when the value is on the host already (lengths from a collate function).
# Calls that queue no GPU work: output and formatting of host values.
_QUIET_CALLS = frozenset(
    f"builtins.{name}" for name in "print str repr format len int float bool round".split()
)
_COMPARED_REDUCTIONS = ("any", "all", "sum", "max", "min", "mean")  # `if x.sum() == 0:` tests the result
# Builtins that compare their arguments: given a tensor, each comparison is a truth test.
_COMPARING_BUILTINS = frozenset({"builtins.max", "builtins.min"})


def _per_call_or_per_element(repeats: bool, tensor_passed: Optional[Callable[[], bool]] = None):
    """Keep a sync in model code always; in step code only where it repeats per element. With
    ``tensor_passed``, only if the helper's callers pass a tensor for the parameter read."""

    def keep(scope: Scope) -> bool:
        hot = in_model_code(scope) or repeats or scope.repeats_within_hot()
        return hot and (tensor_passed is None or tensor_passed())

    return keep


class HostSyncInHotPath(Rule):
    code = "TL201"
    name = "host-sync-in-hot-path"
    message = (
        "host-device sync in a hot path: the CPU waits for every queued GPU kernel and copies the "
        "value back; keep it on the device"
    )
    what = (
        "Finds operations that need a tensor's value on the host: `.item()`, `.tolist()`, "
        "`.cpu()` (also `.to(\"cpu\")`), `.numpy()`, `float(t)`, `int(t)`, `bool(t)`, `math.sqrt(t)`, "
        "`if t:` / `while t:` / "
        "`x if t else y` / `[... for v in t if v]` on a tensor, `max(t, 1)` / `min(t, n)` (each "
        "comparison is a truth test), and `print(t)`; the builtins and truth tests need evidence that "
        "`t` is a tensor (used as one, also by an in-place operation, `exp_avg.mul_(beta)`; annotated `Tensor`; an item of a parameter annotated "
        "`Dict[str, Tensor]`; what a layer or loss the module holds gives for tensors, `self.ce(logits, y)`; "
        "or what a one-line function of the project, in this module or another, returns "
        "from a tensor: `contains_known(target)` of `def contains_known(labels): return is_known(labels).any()`). In `forward` (not that of a data "
        "transform, a class based on a `*Transform`), loss functions (by name, or by a `.backward()` "
        "of their result: `loss = model.neg_log_likelihood(x, tags)`) and loss "
        "modules (and their helpers, also methods they hand on to be called: "
        "`multi_apply(self._targets_single, ...)`) every one is reported, also `.item()` and `if x.any():` / "
        "`x.all()`, or `x.sum() == 0`, on a value whose kind the file cannot tell (there they are a "
        "tensor's; elsewhere, where it is computed from parameters that the function's callers pass "
        "tensors for: `if cosine_sim.max() < delta:` of `cosine_sim = self._cosine(grad, p.data)`, "
        "`self._rms(grad).item()`). In step code (`training_step` and its "
        "family, training-loop bodies, a callback's per-batch hooks such as `on_train_batch_end`, an optimizer's `step`) only "
        "those that run once per element are reported: inside "
        "a loop or comprehension nested in the step (also a `for task in range(meta_batch_size)` loop that "
        "back-propagates each task and leaves the optimizer step to the loop around it; not in what such a loop walks, read once before it "
        "runs: `for p, t in zip(logits.argmax(1).tolist(), y.tolist()):`; nor in a loop or "
        "comprehension over a dict's entries, `for name, value in losses.items():`, a few named "
        "values, or over an optimizer's `param_groups`), and in the helpers such a loop calls "
        "(`_matrix_power(precond)` per parameter of an optimizer step; not a helper that takes the "
        "step itself: the loop calling it is the training loop). A single `loss.item()` per step for logging, a "
        "running total or a progress bar is accepted: it costs one sync per step, the price of "
        "looking at the loss, and flagging it would bury the per-element syncs that cost thousands."
    )
    why = (
        "CUDA kernels run asynchronously: PyTorch queues them and the CPU runs ahead to prepare the "
        "next ones. Reading a value on the host needs a device-to-host copy and a stream "
        "synchronisation: the CPU stops until every queued kernel has finished, and the GPU then "
        "idles while the CPU launches the next kernels. Once per step that is a small bubble; in "
        "`forward` or a loss it happens on every call, and in a per-row loop once per element "
        "(each row adds its own kernel launches plus a copy and a sync)."
    )
    example = Invalid("""
        import torch

        def l1_loss(pred, target):
            total = 0.0
            for i in range(pred.shape[0]):
                total += (pred[i] - target[i]).abs().sum().item()  # expect: TL201
            return total
    """)
    use_instead = Valid("""
        import torch

        def l1_loss(pred, target):
            return (pred - target).abs().sum()  # a tensor; call .item() once, where you log it
    """)
    fix_safety = (
        "No fix: keeping the value on the device changes types (a tensor instead of a float) and "
        "control flow (`torch.where` instead of `if`). Not reported where the data has to reach the "
        "host: `.numpy()` conversions and `.cpu()` copies a function hands to numpy, scipy, OpenCV "
        "and the like (`C = C.cpu()` ... `linear_sum_assignment(C[i])`, also element by element in a loop or in a tuple of "
        "arguments, `args = (x.cpu(), ...)` ... `fsolve(f, x0, args=args)`, "
        "or to a function of the file that does: `distance_maps(target.cpu())`), and `.cpu()` copies passed straight to a callable outside torch and outside the file (`self.scorer(hyp.cpu(), ref.cpu())`: an edit-distance scorer or a feature extractor asked for host data), or collected by a comprehension (`[w[b].cpu() for b in range(B)]`), or, outside forward and losses, packed into a dict "
        "(`{\"boxes\": r[\"boxes\"].cpu(), ...}`: host data for a metric or a writer). Nor on host tensors "
        "(`torch.from_numpy(...)`, the result of `.cpu()`, factories without `device=`), inside a "
        "`raise` (its message is built only when training fails) or an `assert` (a debug check "
        "that `python -O` removes), in a branch that runs once (`if not self._checked: self._checked = True; ...`, or a function after its guard `if self.inited: return` that sets the flag) or returns early for an empty input (`if len(boxes) == 0: return ...`), "
        "in a branch that runs once every few steps (`if step % log_every == 0:`, `if self._should_log():` of a method returning such a test; "
        "on the first step only, `if state[\"step\"] == 0:`; "
        "not `(i + 1) % accumulation_steps`, the optimizer step itself) or only for non-finite values (`if torch.isnan(loss).any():`, "
        "the `else` of `if torch.isfinite(cost).all():`), in a lambda that builds a message (`check(ok, lambda: "
        "f\"got {x.max().item()}\")`: it runs only when the check fails), in code that runs only off "
        "the GPU (`if x.device.type == \"cpu\":`, `if x.is_cpu:`, also through a name, `is_mps = x.device.type == \"mps\"`, "
        "after `if x.is_cuda: return ...`), "
        "in a loss's branch that runs only in evaluation mode (`if not model.training:`: validation statistics), "
        "in a metric's `compute()` (of a class that defines `update()`: once per epoch, also when the metric's `forward` calls it) "
        "and what only it calls, in a function that draws with matplotlib (its data must reach the host), for a `.cpu()` "
        "in a block that calls `torch.cuda.empty_cache()` (a deliberate offload to bound GPU "
        "memory), "
        "in the first statement "
        "under a test that has just synchronised (`if loss.item() > 1: print(loss.item())`, also "
        "`logger.info(...)`: the queue is empty, the second read waits for nothing), in code written "
        "for `torch.export` (the predicate of `torch.cond`, or a value the function bounds with "
        "`torch._check`: `n = t.item(); torch._check(n > 0)` makes data a symbolic size), for shapes and sizes (`int(x.shape[0])`), for identity tests "
        "(`if mask is None`), for numpy values (`np.ceil(np.log(n)).astype(int).item()`, `seq.max()` of a "
        "`seq` the function tests with `isinstance(seq, np.ndarray)`), in helpers "
        "called only in such branches or under a debugging flag (`self.check_weights() if self.configs.debug else None`), "
        "or for bare parameters whose use shows nothing tensor-like "
        "(`if use_cache:`), nor for the `lengths` given to `pack_padded_sequence`, which takes them "
        "only in host memory (already there when they come from the collate function), also "
        "converted (`lengths.cpu().int()`), stored first (`lengths = lengths.cpu().long()`) or handed to a "
        "method of the file that packs with them (`self.encode(x, lengths)`), nor for what `torch.histogram` "
        "counts (it has no CUDA kernel)."
    )
    valid = (
        Valid("""
            import torch

            class A2Grad(torch.optim.Optimizer):
                def step(self, closure=None):
                    for group in self.param_groups:
                        for p in group["params"]:
                            state = self.state[p]
                            if state["step"] == 0:  # a parameter's first step only
                                state["avg_grad"] = p.grad.clone()
                                state["scale"] = p.grad.norm().item() ** 2
                            state["step"] += 1
                            p.data.add_(state["avg_grad"], alpha=-group["lr"] / state["scale"])
        """),
        Valid("""
            import torch

            def report(step, loss):
                print(step, loss.cpu())  # once per step: step code may log

            def train(model, loader, optimizer):
                for step, (x, y) in enumerate(loader):
                    loss = model(x, y)
                    loss.backward()
                    optimizer.step()
                    report(step, loss)
        """),
        Valid("""
            import numpy as np
            import torch

            def clipped(values, limit):
                if values.max() > limit:  # its callers pass numpy arrays
                    values = values.clip(0, limit)
                return values

            def train(model, loader, optimizer, histories):
                for x, y in loader:
                    model(x, y).backward()
                    optimizer.step()
                    for history in histories:
                        history.append(clipped(np.asarray(history[-10:]), 10.0))
        """),
        Valid("""
            import torch

            def _multi_tensor_adan(grads, clip_global_grad_norm):
                torch._foreach_mul_(grads, clip_global_grad_norm.item())  # once per group

            class Adan(torch.optim.Optimizer):
                def step(self):
                    for group in self.param_groups:  # a few groups, not the parameters
                        grads = [p.grad for p in group["params"]]
                        _multi_tensor_adan(grads, torch.norm(torch.stack([g.norm() for g in grads])))
        """),
        Valid("""
            import torch

            class Model:
                def _fit_batch(self, x, y):
                    loss = self.loss_function(self.network(x), y)
                    loss.backward()
                    self.optimizer.step()
                    return float(loss.detach())  # once per step, for the log

                def fit(self, epochs):
                    for batches in epochs:
                        for x, y in batches:  # the training loop: the helper takes the steps
                            self.loss = self._fit_batch(x, y)
                        self.optimizer.step()  # and the epoch ends with one more
        """),
        Valid("""
            import torch
            from scipy import optimize
            from torch import nn

            class PairwiseGP(nn.Module):
                def forward(self, x):
                    args = (x.cpu(), self.covar_inv.cpu())  # host copies scipy is handed
                    mode = optimize.fsolve(self._grad, x0=self.x0, args=args)
                    return torch.as_tensor(mode, device=x.device)
        """),
        Valid("""
            import torch
            from torch import nn

            class MeanMetric(nn.Module):
                def update(self, value):
                    self.total += value.sum()
                    self.count += value.numel()

                def compute(self):  # once per epoch, over what update() gathered
                    return (self.total / self.count).item()

                def forward(self, value):
                    self.update(value)
                    return self.compute()
        """),
        Valid("""
            import torch
            from lightning import Callback

            class KeypointMetric(Callback):
                def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
                    for result in outputs:  # per image: host copies packed for the metric
                        self.predictions.append({"boxes": result["boxes"].detach().cpu(),
                                                 "scores": result["scores"].detach().cpu()})
        """),
        Valid("""
            import torch
            from lightning import Callback

            class TrainingStats(Callback):
                def _should_log(self):
                    return self.step_count % self.log_freq == 0

                def _gradient_stats(self, module):
                    return {name: p.grad.abs().max().item() for name, p in module.named_parameters()}

                def on_after_backward(self, trainer, module):  # per batch, but logs every log_freq steps
                    if self._should_log():
                        module.log_dict(self._gradient_stats(module))
                    self.step_count += 1
        """),
        Valid("""
            import numpy as np
            from torch import nn

            class Recognizer(nn.Module):
                def forward(self, logits):
                    best = logits.argmax(-1)
                    return [self.decode(seq) for seq in best.cpu().numpy()], best

                def decode(self, seq):
                    if isinstance(seq, np.ndarray) and seq.max() >= len(self.vocab):  # an array, or a list
                        return ""
                    return "".join(self.vocab[i] for i in seq)
        """),
        Valid("""
            import numpy as np
            import torch
            from torch import nn

            class Backbone(nn.Module):
                def pretraining(self, x):
                    if self.configs.transformer_type == "encoder_decoder":
                        out = self.encoder(x, x)
                    else:
                        out = self.encoder(x)
                    illegal = self._illegal_weights() if self.configs.debug else None  # a debugging aid
                    top = self.factor * np.ceil(np.log(x.shape[1])).astype("int").item()  # numpy's item
                    return out[:, :top], illegal

                def forward(self, x):
                    return self.pretraining(x)

                def _illegal_weights(self):
                    return torch.stack([torch.isnan(p).any() for p in self.encoder.parameters()]).any().item()
        """),
        Valid("""
            class TraceELBO:
                def loss_and_grads(self, model, guide, batch):  # named like a loss, but takes the step
                    loss, surrogate = self.particle_loss(model, guide, batch)
                    surrogate.backward()
                    return loss.item()  # once per step, like any logged loss
        """),
        Valid("""
            import torch
            from torch import nn

            checks = {}

            class Classifier(nn.Module):
                def forward(self, x):
                    if "range" not in checks:  # only the first call: it records the key
                        if x.min() < -1025 or x.max() > 1025:
                            print("input does not look normalised")
                        checks["range"] = True
                    return self.net(x)
        """),
        Valid("""
            import numpy as np
            import torch
            from torch import nn

            class Inpainter(nn.Module):
                def forward(self, image, alphas):
                    if self.kernel.type() != image.type():  # type strings, not values
                        self.kernel = self.kernel.to(image)
                    scale = np.sqrt(1.0 - alphas.cpu())  # handed to numpy, through arithmetic
                    out = self.net(image) * 255.0
                    return out.cpu().permute(0, 2, 3, 1)[0].numpy().astype(np.uint8), scale
        """),
        Valid("""
            def train_epoch(model, optimizer, batch_groups):
                for group in batch_groups:  # gradient accumulation over the batches of a group
                    optimizer.zero_grad()
                    for batch in group:
                        loss = model(**batch)["loss"] / len(group)
                        loss.backward()
                        log(loss.item())  # once per batch: a training step's logging
                    optimizer.step()
        """),
        Valid("""
            import torch
            from torch import nn

            class ECELoss(nn.Module):
                def __init__(self, n_bins=15):
                    super().__init__()
                    edges = torch.linspace(0, 1, n_bins + 1)
                    self.lowers = edges[:-1]  # a host tensor: a plain attribute, not a buffer

                def forward(self, confidences):
                    return [(confidences > lower.item()).float().mean() for lower in self.lowers]
        """),
        Valid("""
            import editdistance
            import torch.nn.functional as F
            from torch import nn

            class CtcCriterion(nn.Module):
                def forward(self, model, sample):
                    lprobs = model(**sample["net_input"])
                    loss = F.ctc_loss(lprobs, sample["target"], sample["in_lens"], sample["tgt_lens"])
                    errors = 0
                    if not model.training:  # validation statistics: never in a training step
                        for lp, t in zip(lprobs.transpose(0, 1), sample["target"]):
                            errors += editdistance.eval(lp.argmax(-1).unique_consecutive().tolist(), t.tolist())
                    return loss, errors
        """),
        Valid("""
            import torch
            import torch.nn.functional as F

            @torch.no_grad()
            def evaluate(model, loader):
                correct = 0
                for x, y in loader:
                    correct += (model(x.cuda()).argmax(1) == y.cuda()).sum().item()  # an evaluation, not a step
                return correct

            def train(model, loader, val_loader, optimizer):
                for step, (x, y) in enumerate(loader):
                    loss = F.cross_entropy(model(x.cuda()), y.cuda())
                    optimizer.zero_grad(); loss.backward(); optimizer.step()
                    if step % 1000 == 0:
                        print(evaluate(model, val_loader))
        """),
        Valid("""
            def train(model, loader, optimizer, device):
                for x, lengths in loader:
                    x = x.to(device)
                    tokens = sum(int(n) for n in lengths)  # still on the host: moved only below
                    loss = model(x, lengths.to(device)).sum() / tokens
                    loss.backward()
                    optimizer.step()
        """),
        Valid("""
            import numpy as np
            from torch import nn

            def mask_length(shape, mask_prob, span):
                jitter = np.random.rand(1).item()  # a numpy array's item: no tensor
                return int(mask_prob * shape[1] / span + jitter)

            class Masker(nn.Module):
                def forward(self, h):
                    return h[:, :mask_length(h.shape, 0.05, 10)]
        """),
        Valid("""
            import torch.nn.functional as F

            def train(model, loader, optimizer):
                for x, y in loader:
                    logits = model(x.cuda())
                    F.cross_entropy(logits, y.cuda()).backward()
                    optimizer.step()
                    hits = 0
                    for p, t in zip(logits.argmax(1).tolist(), y.tolist()):  # one copy per step, then host values
                        hits += int(p == t)
        """),
        Valid("""
            import torch.nn.functional as F

            def train(model, loader, optimizer, writer):
                for step, (x, y) in enumerate(loader):
                    out = model(x.cuda())
                    losses = {"ce": F.cross_entropy(out["seg"], y.cuda()), "aux": 0.4 * F.cross_entropy(out["aux"], y.cuda())}
                    sum(losses.values()).backward()
                    optimizer.step()
                    for name, value in losses.items():  # a few named terms, once per step
                        writer.add_scalar(name, value.item(), step)
        """),
        Valid("""
            import torch
            from torch import nn

            class ExportableTiles(nn.Module):  # written for torch.export: data becomes symbolic sizes
                def forward(self, x, aspect_ratio):
                    for n_h, n_w in aspect_ratio:
                        n_h = n_h.item()
                        n_w = n_w.item()
                        torch._check(n_h > 0)
                        torch._check(n_w > 0)
                        x = x + self.embedding[:n_h, :n_w].sum()
                    return torch.cond(torch.isnan(x).any().item(), self.reset, self.keep, (x,))
        """),
        Valid("""
            import torch
            from torch import nn
            from scipy.ndimage import distance_transform_edt

            def distance_maps(masks):  # scipy takes host arrays
                maps = torch.zeros(masks.shape)
                for b in range(masks.shape[0]):
                    mask = masks[b].numpy()
                    maps[b] = torch.from_numpy(distance_transform_edt(mask > 0))
                return maps

            class BoundaryLoss(nn.Module):
                def forward(self, pred, target):
                    dist = distance_maps(target.cpu()).to(pred.device)
                    return (pred * dist).mean()
        """),
        Valid("""
            import math
            from numbers import Number
            import torch
            from torch import nn

            class LogSumExp(nn.Module):
                def forward(self, value):
                    total = torch.sum(torch.exp(value))
                    if isinstance(total, Number):  # the code takes a number too: math.log gets that
                        return math.log(total)
                    return torch.log(total)
        """),
        Valid("""
            import torch
            from torch import nn

            class Padded(nn.Module):
                def forward(self, x):
                    fill = torch.full((), 0.5).to(dtype=x.dtype).item()  # a host tensor cast, not moved
                    return x + fill
        """),
        Valid("""
            import torch
            from torch import nn

            class Offloaded(nn.Module):
                def forward(self, x):
                    saved = x.to("cpu", non_blocking=True)  # an asynchronous copy: the host does not wait
                    return self.net(x), saved
        """),
        Valid("""
            import torch
            from torch import nn

            class GraphEncoder(nn.Module):
                def forward(self, src):
                    tokens = src[:, :, 0].cpu().data.numpy()  # a conversion to numpy, for host-side parsing
                    return self.parse(tokens)

            class Detector(nn.Module):
                def forward(self, x):
                    prob = torch.sigmoid(self.head(x))
                    return self.postprocess(prob.detach().cpu().permute(0, 2, 3, 1).numpy())  # for OpenCV
        """),
        Valid("""
            import torch
            from torch import nn
            from scipy.optimize import linear_sum_assignment

            class PermutationInvariantLoss(nn.Module):
                def forward(self, losses):  # (batch, sources, sources)
                    costs = losses.detach().cpu()
                    perms = []
                    for cost in costs:
                        perms.append(linear_sum_assignment(cost)[1])
                    return torch.as_tensor(perms)
        """),
        Valid("""
            import torch
            from torch import nn

            class Replay(nn.Module):
                def forward(self, x):
                    count = int(torch.as_tensor(self.recorded_shape).prod().item())  # host data: no GPU wait
                    return self.net(x), count
        """),
        Valid("""
            from torch import nn

            class Encoder(nn.Module):
                def forward(self, x, lengths, other_lengths):
                    packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu().int(), batch_first=True)
                    other_lengths = other_lengths.cpu().long()  # pack_padded_sequence takes host lengths
                    other = nn.utils.rnn.pack_padded_sequence(x, other_lengths, batch_first=True)
                    return self.rnn(packed), self.rnn(other)
        """),
        Valid("""
            from torch import nn

            class TwoTower(nn.Module):
                def forward(self, users, items):
                    return (self.user(users) * self.item(items)).sum(-1)  # `item`: an embedding
        """),
        Valid("""
            import torch
            from torch import nn

            class Retain(nn.Module):
                def encode(self, x, lengths):
                    return self.gru(nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True))

                def forward(self, x, mask):
                    lengths = mask.sum(dim=-1).cpu()  # handed to a helper that packs with them
                    return self.encode(x, lengths)
        """),
        Valid("""
            from torch import nn

            class Interest(nn.Module):
                def forward(self, x, mask):
                    lengths = mask.sum(dim=1).cpu()
                    seen = lengths > 0
                    packed = nn.utils.rnn.pack_padded_sequence(x[seen], lengths[seen].clamp(min=1), batch_first=True)
                    return self.gru(packed)
        """),
        Valid("""
            import torch
            from torch import nn

            class VelocityFeatures(nn.Module):
                def forward(self, flow):
                    angle, magnitude = torch.atan2(flow[:, 1], flow[:, 0]), flow.norm(dim=1)
                    counts = torch.histogram(angle.cpu(), bins=8, weight=magnitude.cpu())  # no CUDA kernel
                    return counts.hist
        """),
        Valid("""
            import numpy as np

            def summarize(scores):
                best = np.max(scores)
                return {"best": best.item()}  # outside model code, `.item()` may be numpy's
        """),
        Valid("""
            from torch import nn

            class AssignLoss(nn.Module):
                def forward(self, pred, gt, mode="gpu"):
                    if mode == "cpu":  # the fallback after the GPU ran out of memory
                        pred, gt = pred.cpu().float(), gt.cpu().float()
                    return (pred - gt).abs().mean()
        """),
        Valid("""
            import torch
            class Separator(nn.Module):
                def forward(self, x):
                    is_mps = x.device.type in ["mps", "xpu"]
                    if is_mps:
                        x = x.cpu()  # no complex support there: only off CUDA
                    return torch.stft(x, 512, return_complex=True)
        """),
        Valid("""
            import torch
            class VideoSR(nn.Module):
                def forward(self, lqs):
                    feats = []
                    for i in range(lqs.size(1)):
                        feats.append(self.extract(lqs[:, i]).cpu())  # offloaded to bound GPU memory
                        torch.cuda.empty_cache()
                    return feats
        """),
        Valid("""
            import torch
            from lightning import LightningModule
            class Forecaster(LightningModule):
                def training_step(self, batch, batch_idx):
                    out = self(batch)
                    self.plot_prediction(out)
                    return self.loss(out, batch["y"])
                def plot_prediction(self, out: torch.Tensor):
                    from matplotlib import pyplot as plt
                    for series in out:
                        y = series.detach().cpu()  # drawing needs the data on the host
                        plt.plot(y[: int(y.argmax())])
        """),
        Valid("""
            import torch
            class Frontend(nn.Module):
                def forward(self, wav, adj: torch.Tensor):
                    if not adj.has_value():  # a Python bool
                        adj = adj.fill_value(1.0)
                    pieces = [wav[b].detach().cpu() for b in range(wav.shape[0])]
                    return self.extractor(pieces, adj)
        """),
        Valid("""
            import torch
            class ASR(nn.Module):
                def forward(self, x, ys):
                    hyp = self.decoder(x).argmax(-1)
                    if self.training or self.scorer is None:
                        return hyp
                    return self.scorer(hyp.cpu(), ys.cpu())  # hands host data to an edit-distance scorer
        """),
        Valid("""
            import torch
            class Contrastive(nn.Module):
                def forward(self, x, labels):
                    if not self._checked_labels:
                        self._checked_labels = True
                        if labels.ne(0).logical_and(labels.ne(1)).any().item():
                            warnings.warn("labels should be 0 or 1")
                    return x
        """),
        Valid("""
            import torch
            class Codec(nn.Module):
                def forward(self, x):
                    if x.is_cuda or self.fused:
                        return self.fast(x)
                    return self.slow(x, int(x.max()))  # runs only off the GPU
        """),
        Valid("""
            import torch
            class Normalize(nn.Module):
                def forward(self, x):
                    if x.device.type == "cpu" and not torch.all((x >= 0) & (x <= 1)):
                        x = x.sigmoid()
                    if x.is_cuda:
                        return self.fused(x)
                    while not bool(x.isfinite().all()):
                        x = x.nan_to_num()
                    return x
        """),
        Valid("""
            import torch
            from scipy.optimize import linear_sum_assignment
            class HungarianMatcher(nn.Module):
                def forward(self, cost, sizes):
                    cost = cost.cpu()
                    return [linear_sum_assignment(c[:, :n]) for c, n in zip(cost, sizes)]
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    if x.shape[0] == 0:
                        raise ValueError(f'empty batch, sum {x.sum().item()}')
                    return x
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    assert (x >= 0).all(), x.min().item()
                    return x
        """),
        Valid("""
            import torch

            class ModelTestCase:
                def test_batch_backward(self):
                    model, data = self.create_model(), self.create_data()
                    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
                    loss = model(data).sum()
                    loss.backward()
                    for _, param in model.named_parameters():  # a test's checks, once per test
                        self.assertGreater(param.grad.norm().item(), 0)
                    optimizer.step()
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x, arr):
                    t = torch.from_numpy(arr)
                    return x * t.sum().item()
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    rates = torch.linspace(0, 0.1, len(self.blocks)).tolist()
                    for block, rate in zip(self.blocks, rates):
                        x = block(x, rate)
                    return x
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x, mask=None, use_cache=False):
                    if mask is None or use_cache:
                        return x
                    side = int(x.shape[-1] ** 0.5)
                    return x.view(-1, side, side) * mask
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x, return_attn):
                    if return_attn:
                        return x, x
                    return x
        """),
        Valid("""
            import torch
            import torch.nn.functional as F
            for x, y in loader:
                loss = F.cross_entropy(model(x), y)
                loss.backward()
                optimizer.step()
                running_loss += loss.item()
                print(f'loss {loss.item():.3f}')
                writer.add_scalar('loss', loss.item(), step)
        """),
        Valid("""
            import torch
            import torch.nn.functional as F
            class Net(LightningModule):
                def training_step(self, batch, batch_idx):
                    x, y = batch
                    loss = F.cross_entropy(self(x), y)
                    if batch_idx % 100 == 0:
                        self.log('loss', loss.item())
                    return loss
        """),
        Valid("""
            import torch
            def evaluate(model, loader):
                return [model(x).argmax(1).tolist() for x in loader]
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def __init__(self, w):
                    super().__init__()
                    self.n = int(torch.tensor(w).sum().item())
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    print(x.shape)
                    return x
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x, step):
                    if self._should_checkpoint(step):
                        return self.ckpt(x)
                    return x
        """),
        Valid("""
            import torch
            from torch import nn
            class Encoder(nn.Module):
                def forward(self, x, lengths):
                    packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), batch_first=True)
                    return self.rnn(packed)
        """),
        Valid("""
            import torch
            def check_finite_loss(loss: Optional[Tensor]) -> None:
                if loss is not None and not torch.isfinite(loss).all():
                    raise ValueError(f'loss is {loss}')
        """),
    )
    invalid = (
        Invalid("""
            import torch
            from .base import EmbeddingModel

            class TransE(EmbeddingModel):
                def forward(self, head, relation, tail):  # `margin`: a parameter the base class holds
                    return self.margin.item() - (head + relation - tail).norm(p=1, dim=-1)  # expect: TL201
        """),
        Invalid("""
            import torch
            from torch import nn

            class DetectionLoss(nn.Module):
                def __init__(self, weight_class):
                    super().__init__()
                    self.weight_class = weight_class
                    self.ce = nn.CrossEntropyLoss()

                def forward(self, output, targets):
                    logits = output["class"].flatten(0, 1)
                    class_term = self.weight_class * self.ce(logits, targets["class"].flatten())
                    return class_term, {"class_loss": float(class_term)}  # expect: TL201
        """),
        Invalid("""
            import torch
            from torch import nn
            import torch.nn.functional as F

            def is_known(labels):
                return labels >= 0

            def contains_known(labels):
                return is_known(labels).any()

            class OpenSetLoss(nn.Module):
                def forward(self, logits, target):
                    if not contains_known(target):  # expect: TL201
                        return logits.sum() * 0.0
                    known = is_known(target)
                    return F.cross_entropy(logits[known], target[known])
        """),
        Invalid("""
            import torch
            from torch import nn

            class Matcher(nn.Module):
                def forward(self, cost):
                    if not torch.isfinite(cost).all().item():  # expect: TL201
                        finite = cost[torch.isfinite(cost)]  # only for non-finite costs: a rare path
                        cost = torch.nan_to_num(cost, nan=finite.max().item() + 1)
                    return cost.argmin(-1)
        """),
        Invalid("""
            import torch

            class Adafactor(torch.optim.Optimizer):
                def _rms(self, x):
                    return x.pow(2).mean().sqrt()

                def _scale(self, grad, lr):
                    return lr / self._rms(grad).item()  # expect: TL201

                def step(self, closure=None):
                    for group in self.param_groups:
                        for p in group["params"]:  # once per parameter
                            grad = p.grad.data
                            grad.clamp_(-1, 1)
                            p.data.add_(grad, alpha=-self._scale(grad, group["lr"]))
        """),
        Invalid("""
            import torch

            class SGDP(torch.optim.Optimizer):
                @staticmethod
                def _cosine_similarity(x, y, eps):
                    return (x * y).sum(dim=1).abs() / (x.norm(dim=1) * y.norm(dim=1) + eps)

                def _projection(self, p, grad, delta, eps):
                    cosine_sim = self._cosine_similarity(grad, p.data, eps)
                    if cosine_sim.max() < delta:  # expect: TL201
                        grad -= p.data * (p.data * grad).sum()
                    return grad

                def step(self, closure=None):
                    for group in self.param_groups:
                        for p in group["params"]:  # once per parameter
                            grad = p.grad.data
                            p.data.add_(self._projection(p, grad, 0.1, 1e-8), alpha=-group["lr"])
        """),
        Invalid("""
            import torch

            def _matrix_power(matrix: torch.Tensor, power: float) -> torch.Tensor:
                u, s, v = torch.svd(matrix.cpu())  # expect: TL201
                return (u @ s.pow_(power).diag() @ v.t()).to(matrix.device)

            class Shampoo(torch.optim.Optimizer):
                def step(self, closure=None):
                    for group in self.param_groups:
                        for p in group["params"]:  # the helper runs once per parameter
                            precond = self.state[p]["precond"]
                            p.data.sub_(_matrix_power(precond, -0.5) @ p.grad)
        """),
        Invalid("""
            import torch

            class DAdaptAdam(torch.optim.Optimizer):
                def step(self, closure=None):  # once per training step
                    g_sq = 0.0
                    for group in self.param_groups:
                        for p in group["params"]:
                            state = self.state[p]
                            state["exp_avg"].mul_(0.9).add_(p.grad, alpha=0.1)  # in place: a tensor's
                            g_sq += state["exp_avg"].div_(p.grad.abs() + 1e-8).sum().item()  # expect: TL201
                    return g_sq
        """),
        Invalid("""
            import torch

            def meta_train(maml, opt, tasksets, iterations, meta_batch_size):
                for iteration in range(iterations):
                    opt.zero_grad()
                    meta_error = meta_accuracy = 0.0
                    for task in range(meta_batch_size):  # the tasks of one step
                        error, accuracy = adapt(maml.clone(), tasksets.train.sample())
                        error.backward()
                        meta_error += error.item()  # expect: TL201
                        meta_accuracy += accuracy.item()  # expect: TL201
                    opt.step()
                    print(iteration, meta_error / meta_batch_size)
        """),
        Invalid("""
            import torch
            from torch import nn

            class Placeholders(nn.Module):
                def forward(self, tokens, embedded):
                    found = tokens == self.placeholder
                    if sum(found.flatten()) > 0:  # expect: TL201
                        embedded[found] = self.embedding
                    return embedded

            class Resizer(nn.Module):
                def forward(self, x, mask):
                    empty = mask.flatten(1).sum(dim=1) == 0
                    if empty.any():  # expect: TL201
                        bad = torch.where(empty)[0].tolist()  # builds the error: a rare path
                        raise RuntimeError(f"fully padded masks: {bad}")
                    return self.resize(x, mask)
        """),
        Invalid("""
            from typing import Dict

            import torch
            from torch import nn

            class Atomwise(nn.Module):
                def forward(self, inputs: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
                    y = self.outnet(inputs["representation"])
                    idx_m = inputs["idx_m"]  # an item of a dict of tensors is a tensor
                    molecules = int(idx_m[-1]) + 1  # expect: TL201
                    if inputs:  # the dict itself is no tensor
                        inputs["energy"] = scatter_add(y, idx_m, dim_size=molecules)
                    return inputs
        """),
        Invalid("""
            import math
            import torch
            from torch import nn

            class Normalize(nn.Module):
                def forward(self, x):
                    variance = (x ** 2).mean()
                    return x / (1e-3 + math.sqrt(variance))  # expect: TL201
        """),
        Invalid("""
            import torch
            from poutyne import Callback

            class GradientLogger(Callback):
                def on_train_batch_end(self, batch_number, logs):  # a hook run after every training batch
                    for name, param in self.model.network.named_parameters():
                        self.stats[name] = param.grad.abs().mean().item()  # expect: TL201
        """),
        Invalid("""
            import torch
            from torch import nn

            class FEARec(nn.Module):
                def calculate_loss(self, seqs, targets):
                    for i in range(targets.shape[0]):
                        row = seqs[i].to("cpu")  # expect: TL201
                        self.bank.append(row)
                    return seqs.sum()
        """),
        Invalid("""
            import torch
            from torch import nn

            class VariationalStrategy(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.register_buffer("initialized", torch.tensor(0))

                def forward(self, x):
                    return x * 2

                def __call__(self, x):  # wraps forward: runs on every call of the model
                    if not self.initialized.item():  # expect: TL201
                        self.initialized.fill_(1)
                    return super().__call__(x)

            class AblationLayer(nn.Module):
                def __call__(self, x):  # instead of forward: runs on every call of the model
                    output = x.clone()
                    if torch.min(output) == 0:  # expect: TL201
                        output = output + 1e-7
                    return output

            class LogNormalCDF(torch.autograd.Function):
                @staticmethod
                def backward(ctx, grad_output):  # runs in every backward pass
                    z, = ctx.saved_tensors
                    if (z < -1).sum() > 0:  # expect: TL201
                        grad_output = grad_output * 2
                    return grad_output
        """),
        Invalid("""
            import torch.nn.functional as F

            class Agent:
                def __init__(self, net, optimizer):
                    self.net, self.optimizer, self.priorities = net, optimizer, {}

                def learn(self, obs, actions, targets, idxs):  # a step, called from the loop below
                    q = self.net(obs).gather(1, actions).squeeze(1)
                    for i, e in zip(idxs, (q - targets).abs()):
                        self.priorities[i] = e.item()  # expect: TL201
                    loss = F.smooth_l1_loss(q, targets)
                    self.optimizer.zero_grad()
                    loss.backward()
                    self.optimizer.step()

            def main(net, optimizer, replay, steps):
                agent = Agent(net, optimizer)
                for _ in range(steps):
                    agent.learn(*replay.sample(32))
        """),
        Invalid("""
            import torch
            import torch.nn.functional as F

            def td_loss(self, obs, actions, rewards, next_obs, dones):
                with torch.no_grad():  # a target network beside the one trained: still a loss
                    target = rewards + 0.99 * self.target_net(next_obs).max(1).values * (1 - dones)
                q = self.q_net(obs).gather(1, actions).squeeze(1)
                for i in range(len(q)):
                    self.td_errors[i] = abs(q[i].item() - target[i])  # expect: TL201
                return F.smooth_l1_loss(q, target)
        """),
        Invalid("""
            import logging
            import torch
            from torch import nn

            logger = logging.getLogger(__name__)

            class ClampedLoss(nn.Module):
                def forward(self, pred, target):
                    loss = self.loss_func(pred, target)
                    if loss.item() > 1.0:  # expect: TL201
                        logger.info("loss out of range (%.2f), clamped", loss.item())  # the queue is already drained
                        loss = torch.ones_like(loss)
                    return loss
        """),
        Invalid("""
            import torch
            from torch import nn

            class Codebook(nn.Module):
                def __init__(self, size, dim):
                    super().__init__()
                    self.register_buffer("inited", torch.Tensor([False]))
                    self.register_buffer("embed", torch.randn(size, dim))

                def init_embed_(self, data):
                    if self.inited:  # expect: TL201
                        return  # the test still reads the buffer on every call
                    self.embed.data.copy_(data[: self.embed.shape[0]])
                    print(f"codebook initialised, mean {data.mean().item():.3f}")  # runs once
                    self.inited.data.copy_(torch.Tensor([True]))

                def forward(self, x):
                    self.init_embed_(x)
                    return torch.cdist(x, self.embed).argmin(-1)
        """),
        Invalid("""
            import torch
            from torch import nn

            class FocalLoss(nn.Module):
                def __init__(self, alpha):
                    super().__init__()
                    self.alpha = torch.tensor(alpha)  # on the host here, moved below on the first call

                def forward(self, pred, label):
                    if (self.alpha > 0).any():  # expect: TL201
                        self.alpha = self.alpha.to(device=pred.device, dtype=pred.dtype)
                    return (pred - label).abs().mul(self.alpha).mean()
        """),
        Invalid("""
            from torch import nn

            class Encoder(nn.Module):
                def forward(self, tokens):
                    out = self.embed(tokens)
                    mask = self.state.get("padding_mask")  # of a kind the file cannot tell
                    if mask.any():  # expect: TL201
                        out = self.fill(out, mask)
                    if mask.sum() == 0:  # expect: TL201
                        return out
                    return out
        """),
        Invalid("""
            import torch
            from torch import nn

            def per_class_terms(probas, labels, classes):
                terms = []
                for c in classes:
                    fg = (labels == c).type_as(probas)  # only a tensor has type_as: fg is one
                    if fg.sum() == 0:  # expect: TL201
                        continue
                    terms.append(hinge(fg, probas[:, c]))
                return sum(terms)

            class PresentLoss(nn.Module):
                def forward(self, probas, labels):
                    return per_class_terms(*self.flatten(probas, labels), self.classes)
        """),
        Invalid("""
            import torch
            from torch import nn

            class Head(nn.Module):
                def forward(self, x, labels):
                    return self.get_losses(self.conv(x), labels)

                def get_losses(self, outputs, labels):
                    nlabel = (labels.sum(dim=2) > 0).sum(dim=1)  # dim=: only a tensor's sum takes it
                    for image in range(outputs.shape[0]):
                        num_gt = int(nlabel[image])  # expect: TL201
                        self.assign(outputs[image], labels[image, :num_gt])
        """),
        Invalid("""
            import torch
            from torch import nn

            class AdaptiveHead(nn.Module):
                def split_targets(self, target):
                    target = target.view(-1)  # view(-1) takes sizes: a tensor (numpy's view takes a dtype)
                    parts = []
                    for low, high in zip(self.cutoffs, self.cutoffs[1:]):
                        mask = target.ge(low).mul(target.lt(high))
                        if mask.any():  # expect: TL201
                            parts.append(mask.nonzero().squeeze(1))
                    return parts

                def forward(self, x, target):
                    return self.head(x), self.split_targets(target)
        """),
        Invalid("""
            import torch
            from torch import nn

            class QuantConv(nn.Module):
                def forward(self, x):
                    weight, self.scale, self.zero_point = emulate_int(self.weight.detach(), bits=self.bits)
                    low = -self.scale * self.zero_point  # of unknown kind: emulate_int is another file's
                    return self.conv(x, torch.clamp(weight, low.item(), 255.0))  # expect: TL201
        """),  # `.item()` in model code is a tensor's, whatever the inference could not tell
        Invalid("""
            import torch.nn.functional as F
            from torch import nn

            class Criterion(nn.Module):
                def forward(self, logits, target, extra, reduce=True):
                    loss = 0.0
                    if self.weight > 0:
                        loss += self.weight * F.cross_entropy(logits, target)
                    total = 0.0
                    total += F.mse_loss(extra, target)
                    log = {"loss": loss.item() if reduce else loss}  # expect: TL201
                    log["total"] = total.item()  # expect: TL201
                    return loss, log
        """),
        Invalid("""
            import torch.nn as nn
            import torch.nn.functional as F

            def cross_entropy(pred, label, ignore_index):
                loss = F.cross_entropy(pred, label, ignore_index=ignore_index, reduction="sum")
                return loss / (label != ignore_index).sum().item()  # expect: TL201

            class CrossEntropyLoss(nn.Module):
                def __init__(self, use_sigmoid=False):
                    super().__init__()
                    self.criterion = binary_cross_entropy if use_sigmoid else cross_entropy

                def forward(self, pred, label):
                    return self.criterion(pred, label, -100)
        """),
        Invalid("""
            import torch.nn.functional as F
            def masked_nll_loss(logits, labels, mask):
                loss = F.cross_entropy(logits, labels, reduction="none") * mask
                return loss.sum() / max(mask.sum(), 1)  # expect: TL201
        """),
        Invalid("""
            import torch
            class Tacotron(nn.Module):
                def forward(self, x, ys):
                    after, before = self.decoder(x)
                    l1, mse = self.criterion(after, before, ys)
                    loss = l1 + mse
                    stats = dict(l1=l1.item(), loss=loss.item())  # expect: TL201
                    return loss, stats
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    return self.refine(x.cpu())  # expect: TL201

                def refine(self, x):
                    return x * 2
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x, q):
                    check(bool, lambda: f"quality out of range: {q.amin().item()}")
                    loss = (x - q).abs().mean()
                    if loss.item() > 1.0:  # expect: TL201
                        print(f"loss out of range: {loss.item()}")
                        loss = loss.clamp(max=1.0)
                    return loss
        """),
        Invalid("""
            import torch
            def l1_loss(pred, target):
                total = 0.0
                for i in range(pred.shape[0]):
                    total += (pred[i] - target[i]).abs().sum().item()  # expect: TL201
                return total
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    if x.sum() > 0:  # expect: TL201
                        x = x * 2
                    return x
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    scale = float(x.abs().max())  # expect: TL201
                    return x / scale
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    x = self.conv(x)
                    print(x)  # expect: TL201
                    return x.flatten(1)
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    boxes = self.head(x).cpu()  # expect: TL201
                    return boxes
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x, lengths):
                    return [x[i, :n] for i, n in enumerate(lengths.tolist())]  # expect: TL201
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    keep = torch.isfinite(x).all()
                    while not keep:  # expect: TL201
                        x = x.nan_to_num()
                        keep = torch.isfinite(x).all()
                    return x
        """),
        Invalid("""
            import torch
            import torch.nn.functional as F
            for x, y in loader:
                out = model(x)
                loss = F.cross_entropy(out, y)
                loss.backward()
                optimizer.step()
                probs = F.softmax(out, dim=1)
                for p in probs:
                    confidences.append(p.max().item())  # expect: TL201
        """),
        Invalid("""
            import torch
            import torch.nn.functional as F
            class Net(LightningModule):
                def training_step(self, batch, batch_idx):
                    x, y = batch
                    logits = self.net(x)
                    loss = F.cross_entropy(logits, y)
                    preds = F.softmax(logits, dim=1).argmax(1)
                    for i in range(len(y)):
                        self.hits += int(preds[i] == y[i])  # expect: TL201
                    return loss
        """),
        Invalid("""
            import torch
            from torch import nn

            def train(model, loader, optimizer):
                criterion = nn.CrossEntropyLoss(reduction="none")
                for x, y in loader:
                    x, y = x.cuda(), y.cuda()
                    losses = criterion(model(x), y)
                    losses.mean().backward()
                    optimizer.step()
                    hardest = [losses[i].item() for i in range(len(y))]  # expect: TL201
                    for i in range(len(y)):
                        if y[i] == 0:  # expect: TL201
                            hardest[i] = 0.0
        """),
        Invalid("""
            import torch

            def ppo_loss(logp, old_logp, adv, clip=0.2):
                ratio = (logp - old_logp).exp()
                loss = -torch.min(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv).mean()
                with torch.no_grad():  # statistics, not an evaluation
                    clipfrac = ((ratio - 1.0).abs() > clip).float().mean()
                return loss, clipfrac.item()  # expect: TL201
        """),
        Invalid("""
            from torch import nn

            def multi_apply(func, *args):
                return tuple(map(list, zip(*map(func, *args))))

            class Head(nn.Module):
                def _targets_single(self, anchors, valid):  # run per image by the loss
                    if not valid.any():  # expect: TL201
                        return None, None
                    return anchors[valid], valid.sum()

                def loss(self, anchor_list, valid_list):
                    return multi_apply(self._targets_single, anchor_list, valid_list)
        """),
        Invalid("""
            import torch
            from torch import nn

            class Tagger(nn.Module):
                def neg_log_likelihood(self, feats, tags):  # a loss: train() back-propagates its result
                    score = self.score(feats, tags)
                    self.history.append(score.item())  # expect: TL201
                    return self.partition(feats) - score

            def train(model, data, optimizer):
                for sentence, tags in data:
                    loss = model.neg_log_likelihood(model.embed(sentence), tags)
                    loss.backward()
                    optimizer.step()
        """),
    )

    def visit_Call(self, node: cst.Call) -> None:
        method = host_read(node) or waiting_copy_to_host(self.ctx, node)
        if method is not None:
            kind = self.ctx.tensor_kind(method.value)
            if kind is None and (self._unpacked_tensor(method.value) or method.attr.value == "item" and isinstance(
                    method.value, cst.Name) and self.ctx.tensor_on_some_path(method.value.value)):
                kind = TENSOR
            tensor_passed = self._parameter_read(method.value) if kind is None else None
            unknown_item = kind is None and tensor_passed is None and method.attr.value == "item"
            if (kind == TENSOR or tensor_passed is not None or unknown_item) and not (
                self._host_argument(node) or self._leaves_torch(node)
            ):
                # `.item()` of a value of unknown kind: in model code (forward, a loss) it is a
                # tensor's; elsewhere it may as well be a numpy scalar's
                what = "`.to(cpu)`" if method.attr.value == "to" else f"`.{method.attr.value}()`"
                self._flag(
                    node, what, tensor_passed, model_code_only=unknown_item or self._packed_in_dict(node),
                    elsewhere=self._computed_from_passed_tensors(method.value) if unknown_item else None,
                )
            return
        name = self.ctx.qualname(node.func)
        args = positional(node)
        if name in HOST_READ_BUILTINS and len(node.args) == 1 and args and self.ctx.surely_tensor(args[0].value):
            self._flag(node, f"`{name[9:]}(tensor)`")
        elif name in _MATH_READS and any(self._surely_tensor_argument(arg.value) for arg in args):
            self._flag(node, f"`{name}(tensor)`")  # math.sqrt(var): a float(var) first
        elif name == "builtins.print" and any(self._shows_tensor(arg.value) for arg in node.args):
            self._flag(node, "`print(tensor)`")
        elif name in _COMPARING_BUILTINS and len(args) > 1 and any(self.ctx.surely_tensor(arg.value) for arg in args):
            self._flag(node, f"`{name[9:]}()` comparing a tensor")  # max(weight.sum(), 1): a truth test

    def _surely_tensor_argument(self, value: cst.BaseExpression) -> bool:
        """A tensor for sure, and not a name the function tests the type of (``if
        isinstance(total, Number): math.log(total)``)."""
        return self.ctx.surely_tensor(value) and not self._type_tested(value)

    def _type_tested(self, value: cst.BaseExpression) -> bool:
        """A name the function tests the type of: a tensor or something else."""
        return isinstance(value, cst.Name) and self.ctx.type_tested(value.value)

    def visit_If(self, node: cst.If) -> None:
        self._truth_test(node.test)

    def visit_While(self, node: cst.While) -> None:
        self._truth_test(node.test)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._truth_test(node.test)

    def visit_CompIf(self, node: cst.CompIf) -> None:
        self._truth_test(node.test)

    def _truth_test(self, test: cst.BaseExpression) -> None:
        for operand in _truth_operands(test):
            if self.ctx.surely_tensor(operand):
                self._flag(operand, "a truth test on a tensor")
            elif self._unknown_reduction(operand):
                # `if out["padding_mask"].any():` in model code (forward, a loss) tests a tensor; in a
                # helper, what it reduces may come from parameters its callers pass tensors for
                self._flag(operand, "a truth test on a tensor", model_code_only=True,
                           elsewhere=self._computed_from_passed_tensors(operand))

    def _computed_from_passed_tensors(self, node: cst.BaseExpression) -> Optional[Callable[[], bool]]:
        """For ``cosine_sim.max() < delta`` computed from parameters of the current function
        (``cosine_sim = self._cosine(grad, p.data)``): a test, for once the file is walked, that
        the callers pass a tensor for one of them."""
        function = self.ctx.scope.function
        names = _parameters_behind(self.ctx, node, function)
        if not names:
            return None
        return lambda: any(self.ctx.parameter_kind(function, name) == TENSOR for name in names)

    def _unknown_reduction(self, node: cst.BaseExpression, reductions: Tuple[str, ...] = ("any", "all")) -> bool:
        """``x.any()`` / ``x.all()`` of a value whose kind the inference cannot tell (nor the
        function tests the type of), also compared (``x.sum() == 0``, ``x.max() > limit``: the
        reductions of arrays), also through the name holding it (``num_pos = pos.sum()`` ...
        ``if num_pos == 0``)."""
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
            return any(
                self._unknown_reduction(side, _COMPARED_REDUCTIONS)
                for side in (node.left, node.comparisons[0].comparator)
            )
        if isinstance(node, cst.Name):
            node = self.ctx.value_of(node.value)
        method = method_call(node, *reductions) if node is not None else None
        return (  # not `isinstance(seq, np.ndarray) and seq.max() >= n`: an array, or something else
            method is not None and not node.args and self.ctx.tensor_kind(method.value) is None
            and not self._type_tested(method.value)
        )

    def _holders(self) -> Tuple[Optional[cst.CSTNode], Optional[cst.CSTNode]]:
        """The parent of the visited node and its grandparent (an ``Arg`` and its call)."""
        ancestors = self.ctx.ancestors
        return self.ctx.parent, ancestors[-2] if len(ancestors) > 1 else None

    def _host_argument(self, node: cst.Call) -> bool:
        """Is ``node`` passed where the callee requires a host value (``pack_padded_sequence``'s
        lengths), also after conversions (``lengths.cpu().int()``) or through the name it is
        stored in (``lengths = lengths.cpu().long()`` ... ``pack_padded_sequence(x, lengths)``)?"""
        ancestors = self.ctx.ancestors
        current, index = self._through_conversions(node)
        holder = ancestors[index] if index >= 0 else None
        stored = assigned_name(holder, current)
        if stored is not None:
            return self.ctx.needed_on_host(stored)
        if not isinstance(holder, cst.Arg) or index < 1 or not isinstance(ancestors[index - 1], cst.Call):
            return False
        return any(argument is holder.value for argument in host_arguments(self.ctx.qualname, ancestors[index - 1]))

    def _leaves_torch(self, node: cst.Call) -> bool:
        """Is ``node`` a conversion to numpy (``t.numpy()``, ``t.cpu().numpy()``,
        ``t.cpu().detach().numpy()``, ``t.cpu().data.numpy()``, ``t.cpu().permute(0, 2, 1).numpy()``), or a ``.cpu()`` copy stored for a
        library that takes host arrays only (``C = C.cpu()`` ... ``linear_sum_assignment(C[i])``, also
        in a tuple of arguments, ``args = (x.cpu(), d.cpu())`` ... ``fsolve(f, x0, args=args)``):
        data handed to code outside torch, which needs it on the host?"""
        if method_call(node, "numpy") is not None:
            return True
        if method_call(node, "cpu") is not None or waiting_copy_to_host(self.ctx, node) is not None:
            stored = assigned_name(self.ctx.parent, node) or self._stored_in_display(node)
            if stored is not None and self.ctx.needed_on_host(stored):
                return True
            if self._handed_outside_torch(node) or self._offloads():
                return True
        current, index = self._through_conversions(node)
        return index > 0 and self._method_of(current, index) == "numpy"

    def _through_conversions(self, node: cst.Call) -> Tuple[cst.CSTNode, int]:
        """The outermost of ``node``'s chain of conversions (``t.cpu().detach().long()``, also
        through ``.data`` and indexing), and the index among the ancestors of what holds it."""
        ancestors = self.ctx.ancestors
        current, index = node, len(ancestors) - 1
        while index > 0:
            holder = ancestors[index]
            if isinstance(holder, cst.Attribute) and holder.value is current and holder.attr.value == "data" or (
                isinstance(holder, cst.Subscript) and holder.value is current
            ):
                current, index = holder, index - 1  # `.data`, `[0]`: the same values
            elif self._method_of(current, index) in _CONVERSIONS:
                current, index = ancestors[index - 1], index - 2
            else:
                break
        return current, index

    def _method_of(self, receiver: cst.CSTNode, index: int) -> Optional[str]:
        """The method called on ``receiver`` when its ancestors at ``index`` and ``index - 1`` are
        ``receiver.method`` and the call of it."""
        attribute, call = self.ctx.ancestors[index], self.ctx.ancestors[index - 1]
        if isinstance(attribute, cst.Attribute) and attribute.value is receiver \
                and isinstance(call, cst.Call) and call.func is attribute:
            return attribute.attr.value
        return None

    def _offloads(self) -> bool:
        """Is the ``.cpu()`` in a block that frees the GPU's cache (``feat = f(x).cpu()``;
        ``torch.cuda.empty_cache()``): a deliberate offload to bound GPU memory?"""
        if "empty_cache" not in self.ctx.text:
            return False  # the scan below reads the whole block, for every `.cpu()`
        block = next((node for node in reversed(self.ctx.ancestors) if isinstance(node, cst.IndentedBlock)), None)
        return block is not None and any(
            isinstance(node, cst.Call) and self.ctx.qualname(node.func) == "torch.cuda.empty_cache"
            for statement in block.body for node in descendants(statement)
        )

    def _stored_in_display(self, node: cst.Call) -> Optional[str]:
        """The name a tuple or list holding ``node`` is stored in (``args = (x.cpu(), d.cpu())``)."""
        ancestors = self.ctx.ancestors
        if len(ancestors) < 3 or not isinstance(ancestors[-1], cst.Element) or not isinstance(ancestors[-2], (cst.Tuple, cst.List)):
            return None
        return assigned_name(ancestors[-3], ancestors[-2])

    def _handed_outside_torch(self, node: cst.Call) -> bool:
        """Is ``node`` an argument of a call outside torch and outside this file (``scorer(hyp.cpu(),
        ref.cpu())``, ``np.array(x.cpu())``), or of a function of this file that hands it to a library
        taking host arrays, or what a comprehension collects: host data for a consumer? Also
        through arithmetic (``np.sqrt(1.0 - alphas.cpu())``)."""
        ancestors = self.ctx.ancestors
        index = len(ancestors) - 1
        while index > 0 and isinstance(ancestors[index], (cst.BinaryOperation, cst.UnaryOperation)):
            node, index = ancestors[index], index - 1
        arg, call = ancestors[index], ancestors[index - 1] if index > 0 else None
        if isinstance(arg, (cst.ListComp, cst.GeneratorExp)) and arg.elt is node:
            return True  # [w[b].cpu() for b in ...]: the batch split into host pieces for a consumer
        if not isinstance(arg, cst.Arg) or not isinstance(call, cst.Call):
            return False
        if isinstance(call.func, cst.Attribute) and (
            call.func.attr.value in _CONTAINER_METHODS or self.ctx.tensor_kind(call.func.value) in (TENSOR, HOST)
        ):
            return False  # kept in a list, or a tensor method
        if self.ctx.defined_here(call.func):
            return self.ctx.passes_to_host_library(call, arg)  # compute_dtm(target.cpu()) ... scipy
        return not (self.ctx.qualname(call.func) or "").startswith("torch.")

    def _packed_in_dict(self, node: cst.Call) -> bool:
        """Is ``node`` a value of a dict (``{"boxes": r["boxes"].cpu(), ...}``, ``{k: v.cpu() for
        ...}``)? Outside model code that is host data packed for a metric or a writer."""
        parent = self.ctx.ancestors[-1] if self.ctx.ancestors else None
        return isinstance(parent, (cst.DictComp, cst.DictElement)) and parent.value is node

    def _shows_tensor(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, cst.FormattedString):
            return any(
                isinstance(part, cst.FormattedStringExpression) and self.ctx.surely_tensor(part.expression)
                for part in node.parts
            )
        return self.ctx.surely_tensor(node)

    def _unpacked_tensor(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        """Is ``node`` unpacked from what a call on tensors returned (``l1, mse = self.criterion(out,
        y)`` ... ``l1.item()``), or beside a tensor (``error, accuracy = adapt(...)`` ...
        ``error.backward()``), or an expression over such values and tensors? A tuple may hold
        anything, but what has ``.item()`` called on it next to a tensor is a tensor."""
        if depth > 3:
            return False
        if depth and self.ctx.tensor_kind(node) == TENSOR:
            return True
        if isinstance(node, cst.BinaryOperation):
            return any(self._unpacked_tensor(side, depth + 1) for side in (node.left, node.right))
        if not isinstance(node, cst.Name):
            return False
        call = self.ctx.unpacked_from(node.value)
        if call is not None:
            return self.ctx.tensor_kind(call) == TENSOR or any(
                self.ctx.used_as_tensor(other) for other in self.ctx.unpacked_together(node.value)
            )
        value = self.ctx.value_of(node.value)
        return value is not None and self._unpacked_tensor(value, depth + 1)

    def _parameter_read(self, node: cst.BaseExpression) -> Optional[Callable[[], bool]]:
        """For ``logits[i].argmax()`` where ``logits`` is a parameter of the current function
        of unknown kind: a test, for once the file is walked, that its callers pass a tensor."""
        while isinstance(node, (cst.Subscript, cst.Attribute)) or method_call(node) is not None:
            node = node.value if not isinstance(node, cst.Call) else node.func.value
        function = self.ctx.scope.function
        if not isinstance(node, cst.Name) or node.value == "self" or not is_parameter(function, node.value) or \
                self.ctx.value_of(node.value):
            return None  # `self.margin.item()`: an attribute, not what the callers pass
        name = node.value
        return lambda: self.ctx.parameter_kind(function, name) == TENSOR

    def _after_a_sync(self) -> bool:
        """In the first statement of ``if <sync>:`` (``if loss.item() > 1: print(loss.item())``):
        the test has just drained the GPU's queue and nothing was launched since, so reading
        values again waits for nothing, as long as the statement queues no work of its own."""
        ancestors = self.ctx.ancestors
        for index in range(len(ancestors) - 3, -1, -1):
            node = ancestors[index]
            if isinstance(node, cst.If):
                block = ancestors[index + 1]
                return (
                    block is node.body and ancestors[index + 2] is node.body.body[0]
                    and self._syncs(node.test) and not self._launches(ancestors[index + 2])
                )
            if isinstance(node, (cst.FunctionDef, cst.For, cst.While, cst.With, cst.Try)):
                return False
        return False

    def _syncs(self, test: cst.BaseExpression) -> bool:
        """Does evaluating ``test`` wait for the GPU?"""
        if any(self.ctx.surely_tensor(operand) for operand in _truth_operands(test)):
            return True
        return any(
            (method := host_read(node)) is not None and self.ctx.tensor_kind(method.value) == TENSOR
            for node in descendants(test)
        )

    def _launches(self, statement: cst.CSTNode) -> bool:
        """Could ``statement`` queue GPU work: a call other than a read, print or formatting?"""
        for node in descendants(statement):
            if isinstance(node, cst.Call) and host_read(node) is None:
                name = self.ctx.qualname(node.func) or ""
                if name not in _QUIET_CALLS and not log_call(node.func):
                    return True
        return False

    def _flag(
        self, node: cst.CSTNode, what: str, tensor_passed: Optional[Callable[[], bool]] = None,
        model_code_only: bool = False, elsewhere: Optional[Callable[[], bool]] = None,
    ) -> None:
        """Report a sync where it counts: in model code, and in step code where it repeats per
        element; with ``model_code_only``, in model code alone, or also where ``elsewhere``
        holds (the value tested is computed from tensors the callers pass)."""
        if (
            self.ctx.in_rare_path() or self.ctx.in_definition() or self.ctx.in_off_gpu_branch() or self.ctx.in_validation_statistics()
            or self._after_a_sync() or self._for_export(node)
        ):
            return
        message = f"host-device sync in a hot path: {what} waits for every queued GPU kernel; keep it on the device"
        if model_code_only:
            per_element = _per_call_or_per_element(self._in_comprehension_over_elements(), elsewhere)

            def keep(scope: Scope) -> bool:
                if in_model_code(scope):
                    return tensor_passed is None or tensor_passed()
                return elsewhere is not None and per_element(scope)
        elif self._walked_iterable(node):  # `for p in logits.tolist():` reads once, before the loop
            per_run = _per_call_or_per_element(False, tensor_passed)
            keep = lambda scope: per_run(scope.parent if scope.kind == "loop" and scope.parent else scope)  # noqa: E731
        else:
            keep = _per_call_or_per_element(self._in_comprehension_over_elements(), tensor_passed)
        self.report(node, message, hot_when=keep)

    def _in_comprehension_over_elements(self) -> bool:
        """Inside a comprehension that walks more than a dict's entries (``{k: v.item() for k, v
        in losses.items()}`` reads a few named values)?"""
        for node in self.ctx.ancestors:
            if isinstance(node, COMPREHENSIONS):
                for_in = node.for_in
                while for_in is not None:
                    if not walks_entries(for_in.iter):
                        return True
                    for_in = for_in.inner_for_in
        return False

    def _walked_iterable(self, node: cst.CSTNode) -> bool:
        """Is ``node`` in what the innermost loop walks (``for p, t in zip(pred.tolist(), ...)``,
        the first ``for`` of a comprehension), evaluated once before the loop runs?"""
        ancestors = self.ctx.ancestors
        child = node
        for index in range(len(ancestors) - 1, -1, -1):
            parent = ancestors[index]
            if isinstance(parent, cst.For):
                return child is parent.iter
            if isinstance(parent, cst.CompFor):
                return child is parent.iter and index > 0 and not isinstance(ancestors[index - 1], cst.CompFor)
            if isinstance(parent, (cst.While, cst.FunctionDef, cst.Lambda, *COMPREHENSIONS)):
                return False
            child = parent
        return False

    def _for_export(self, read: cst.CSTNode) -> bool:
        """A read written for ``torch.export``: the predicate of ``torch.cond``, or a value the
        function bounds with ``torch._check`` (``n = t.item(); torch._check(n > 0)``), which is
        how exported code turns data into symbolic sizes."""
        if "torch._check" not in self.ctx.text and "cond(" not in self.ctx.text:
            return False
        ancestors = self.ctx.ancestors
        if len(ancestors) >= 2 and isinstance(ancestors[-1], cst.Arg) and isinstance(ancestors[-2], cst.Call):
            return self.ctx.qualname(ancestors[-2].func) == "torch.cond" and ancestors[-2].args[0] is ancestors[-1]
        stored = assigned_name(ancestors[-1], read) if ancestors else None
        function = self.ctx.scope.function.node
        return stored is not None and function is not None and any(
            isinstance(node, cst.Call) and (self.ctx.qualname(node.func) or "").startswith("torch._check")
            and any(is_name(name, stored) for arg in node.args for name in descendants(arg.value))
            for node in descendants(function)
        )


def _truth_operands(test: cst.BaseExpression) -> Iterable[cst.BaseExpression]:
    """The expressions whose truth value ``if test:`` asks for (on the GPU)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        yield from _truth_operands(test.expression)
    elif isinstance(test, cst.BooleanOperation):
        yield from _truth_operands(test.left)
        if not guards_right(test, off_gpu_branch):
            yield from _truth_operands(test.right)  # not `x.is_cpu and t.any()`: that runs off the GPU only
    else:
        yield test


def _parameters_behind(ctx, node: Optional[cst.BaseExpression], function: Scope, depth: int = 0) -> Set[str]:
    """The parameters of ``function`` that ``node`` is computed from, through its names, views,
    methods, arithmetic and the calls of helpers given them (``self._cosine(grad, p.data)``)."""
    while node is not None and depth < 4:
        if isinstance(node, cst.Comparison):
            return set().union(*(_parameters_behind(ctx, side, function, depth + 1) for side in comparison_operands(node)))
        if isinstance(node, cst.BinaryOperation):
            return _parameters_behind(ctx, node.left, function, depth + 1) | _parameters_behind(
                ctx, node.right, function, depth + 1
            )
        func = node.func if isinstance(node, cst.Call) else None
        if isinstance(func, cst.Name) or isinstance(func, cst.Attribute) and is_name(func.value, "self"):
            return set().union(*(_parameters_behind(ctx, arg.value, function, depth + 1) for arg in node.args))
        if isinstance(node, cst.Name):
            value = ctx.value_of(node.value)
            if value is None:
                return {node.value} if node.value != "self" and is_parameter(function, node.value) else set()
            node, depth = value, depth + 1
        elif isinstance(node, (cst.Subscript, cst.Attribute)):
            node = node.value
        elif method_call(node) is not None:
            node = node.func.value
        else:
            break
    return set()
