"""TL103 constant-tensor-in-hot-path: a constant tensor rebuilt from literals on every call."""

from __future__ import annotations

import libcst as cst

from torchlint.context.factories import DATA_FACTORIES, LEGACY_CONSTRUCTORS, constant_data, data_argument, factory_name
from torchlint.context.scopes import in_model_code
from torchlint.rules.base import Invalid, Rule, Valid
from torchlint.syntax import assigned_name, literal_value, method_call


class ConstantTensorInHotPath(Rule):
    code = "TL103"
    name = "constant-tensor-in-hot-path"
    message = (
        "constant tensor built from literals on every call; build it once in `__init__` with "
        "`self.register_buffer(...)`"
    )
    what = (
        "Finds `torch.tensor(...)`, `torch.as_tensor(...)`, `x.new_tensor(...)` and legacy constructors "
        "(`torch.FloatTensor(...)`) whose data is a literal list or tuple of numbers (nested lists "
        "allowed, e.g. `[0.485, 0.456, 0.406]`; named constants and arithmetic of numbers count: `[2 * np.pi]`), "
        "in `forward`, a loss, or a helper of those."
    )
    why = (
        "The values never change, yet every call converts a Python list element by element into a "
        "new host tensor (several microseconds of CPU time). With `device=` (or a later "
        "`.to(x.device)`) it is then copied to the GPU with a blocking copy from pageable memory: "
        "the CPU waits for all queued kernels before it can launch the next ones, on every forward. "
        "The copy also breaks CUDA-graph capture. A buffer registered in `__init__` is built once, "
        "moves with the module (`model.to(device)`), and is saved in its `state_dict` (or not, with "
        "`persistent=False`)."
    )
    example = Invalid("""
        import torch
        from torch import nn

        class Normalize(nn.Module):
            def forward(self, x):
                mean = torch.tensor([0.485, 0.456, 0.406], device=x.device).view(1, 3, 1, 1)  # expect: TL103
                std = torch.tensor([0.229, 0.224, 0.225], device=x.device).view(1, 3, 1, 1)  # expect: TL103
                return (x - mean) / std
    """)
    use_instead = Valid("""
        import torch
        from torch import nn

        class Normalize(nn.Module):
            def __init__(self):
                super().__init__()
                mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
                std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
                self.register_buffer("mean", mean, persistent=False)
                self.register_buffer("std", std, persistent=False)

            def forward(self, x):
                return (x - self.mean) / self.std
    """)
    fix_safety = (
        "No fix: a buffer needs a name, a line in `__init__` and a decision about `persistent`. Not "
        "reported for data that is not all literal (`torch.tensor([h, w])`, `torch.tensor(x.shape)`), "
        "for 0-d scalars (`torch.tensor(0.0)`: write a Python number, or it is an accumulator's "
        "start), in `__init__`, at module level, in parameter defaults, in training-loop code "
        "(where the constant belongs before the loop, not in a buffer), or on rare paths: a branch "
        "that runs once (`if self.hyps is None: self.hyps = ...`), one that warns about an abnormal "
        "case and bails out, one that returns early for an empty input (`if x.numel() == 0: return ...`), "
        "a lazy initialisation after its guard (`if self.inited: return` ... `self.inited.fill_(True)`), "
        "`raise`/`assert`/`except`."
    )
    valid = (
        Valid("""
            import torch
            import torch.nn.functional as F

            def generator_loss(fake_scores):
                if fake_scores.numel() == 0:  # an empty input: an edge case, not a step
                    return torch.tensor([0.0], device=fake_scores.device)
                return F.softplus(-fake_scores).mean()
        """),
        Valid("""
            import logging
            import torch
            class BeamSearch(nn.Module):
                def forward(self, x, lengths):
                    if self.running is None:
                        self.running = {"score": torch.tensor([0.0]), "length": torch.tensor([2])}
                    if not (lengths > 0).any():
                        logging.warning("every example is too short; skipping the batch")
                        return torch.tensor([0.0]).to(x.device)
                    return self.search(x, self.running)
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.register_buffer('mean', torch.tensor([0.485, 0.456, 0.406]))
        """),
        Valid("""
            import torch
            MEAN = torch.tensor([0.485, 0.456, 0.406])
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    return x * torch.tensor([h, w])
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    return x / torch.tensor(x.shape[2:])
        """),
        Valid("""
            import torch
            def my_loss(pred, target):
                total = torch.tensor(0.0, device=pred.device)
                return total + (pred - target).abs().sum()
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    return x * torch.tensor(self.scale)
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    return x * torch.tensor([])
        """),
        Valid("""
            import torch
            def make_weights():
                return torch.tensor([1.0, 2.0])
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x, w=torch.tensor([1.0, 2.0])):
                    return x * w
        """),
        Valid("""
            import torch
            for x, y in loader:
                w = torch.tensor([1.0, 5.0])
                loss = F.cross_entropy(model(x), y, weight=w)
                loss.backward()
        """),
    )
    invalid = (
        Invalid("""
            import torch
            class Folded(nn.Module):
                def forward(self, value):
                    signs = value.new_tensor([1.0, -1.0])  # expect: TL103
                    return self.base.log_prob(value * signs[:, None]).logsumexp(0)
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)  # expect: TL103
                    return x - mean
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    std = torch.tensor([0.229, 0.224, 0.225], device=x.device)  # expect: TL103
                    return x / std[:, None, None]
        """),
        Invalid("""
            import torch
            def focal_loss(pred, target):
                alpha = torch.as_tensor([[0.25], [0.75]], dtype=pred.dtype)  # expect: TL103
                return (alpha * pred).sum()
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    return x * self._scale()
                def _scale(self):
                    return torch.FloatTensor([1 / 255, -0.5 * 2])  # expect: TL103
        """),
        Invalid("""
            import numpy as np
            import torch
            def gaussian_nll_loss(x, mu, log_var):
                log_2pi = torch.log(torch.tensor([2 * np.pi]).to(x.device))  # expect: TL103
                return 0.5 * (log_2pi + log_var + (x - mu) ** 2 / log_var.exp()).sum()
        """),
    )

    def visit_Call(self, node: cst.Call) -> None:
        factory = factory_name(self.ctx.qualname(node.func))
        if factory not in DATA_FACTORIES and factory not in LEGACY_CONSTRUCTORS and (
            method_call(node, "new_tensor") is None  # x.new_tensor([1.0, -1.0]): on x's device, from literals
        ):
            return
        data = data_argument(node)
        if (
            data is None or not constant_data(data) or self.ctx.in_definition() or self.ctx.in_rare_path()
            or self._placeholder(node, data)
        ):
            return
        self.report(node, hot_when=in_model_code)

    def _placeholder(self, node: cst.Call, data: cst.BaseExpression) -> bool:
        """``aux = torch.tensor([0.0])`` kept only to be logged or returned: a single zero stored
        in a name the function never computes with."""
        if not (isinstance(data, (cst.List, cst.Tuple)) and len(data.elements) == 1
                and literal_value(data.elements[0].value) == 0):
            return False
        stored = assigned_name(self.ctx.parent, node)
        return stored is not None and not self.ctx.computes_with(stored)
