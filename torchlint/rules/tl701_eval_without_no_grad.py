"""TL701 eval-without-no-grad: an evaluation loop that runs the model with autograd recording."""

from __future__ import annotations

import re
from typing import Dict, List, Set, Tuple

import libcst as cst

from torchlint.context import Scope
from torchlint.context.scopes import STEP_METHODS, is_training_step_call, loops_around
from torchlint.rules.base import Invalid, Rule, Valid
from torchlint.syntax import assigned_name, dotted_name, is_name, literal_value, positional
from torchlint.walker import descendants, iter_children

# Context managers and decorators that turn autograd off: torch's own, and the wrappers
# packages build on them (ultralytics' `smart_inference_mode`, monai's `eval_mode`).
_NO_GRAD = re.compile(r"(^|_)(no_grad|inference_mode|eval_mode)$")
_PART_TAKERS = frozenset({"list", "next", "iter", "getattr"})  # list(model.children())[0]
_PARTS = frozenset({"children", "modules", "named_children", "named_modules", "get_submodule"})
# A function that evaluates or predicts: `evaluate`, `validate_epoch`, `predict_proba`, `run_inference`.
_EVAL_FUNCTION = re.compile(
    r"(^|_)(eval|evaluate|evaluation|valid|validate|validation|val|test|predict|prediction|predictions|inference|infer)(_|$)"
)
# Lightning runs these (and their hooks) with grad disabled. (`test_*` functions are tests only in
# test code, which is not reported: in a training script, `test_epoch` evaluates.)
_NOT_EVAL = re.compile(r"^on_(validation|test|predict)_|_epoch_end$")
_MODEL = frozenset({"model", "net", "network"})
_PREDICTS = re.compile(r"(predict|inference|infer)(_|$)")  # a model's own prediction methods: predict_proba
# Methods that show a loop handles tensors: where nothing put a model in eval mode, a callable
# named `model` may be a high-level predictor (`YOLO(path)`) that turns grad off itself.
_TENSOR_METHODS = frozenset("to cuda cpu detach numpy item argmax softmax float unsqueeze".split())
_NESTED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
# The key a method that puts a model in eval mode and runs it with grad on is offered by, after
# its qualified name (`pkg.trainer.Trainer.predict@evaluates`): a loop elsewhere calling it evaluates.
_EVALUATES = "@evaluates"


class EvalWithoutNoGrad(Rule):
    code = "TL701"
    name = "eval-without-no-grad"
    message = (
        "evaluation loop runs the model with autograd on: each forward records a graph and keeps its "
        "activations alive; wrap it in `torch.no_grad()` or `torch.inference_mode()`"
    )
    # A model put in eval mode, or torch code; an evaluation loop with neither is out of reach.
    triggers = ("torch", "eval(", "train(False")
    what = (
        "Finds a `for`/`while` loop that calls a model (the object put in eval mode, a part of it taken "
        "after that, `backbone = list(model.children())[0]`, or one named `model`, `net` or `network`; "
        "called, or, for what was put in eval mode, a prediction method of it given arguments: "
        "`model.predict(x)`; not `model.generate(ids)` or `model.load_state_dict(sd)`), "
        "itself or through a function of the same file it calls (not one decorated with "
        "`@torch.no_grad()`), in evaluation "
        "code: after `model.eval()` in the same function (also `detector = build(cfg).to(device).eval()`), or in a "
        "function named for evaluation (`evaluate`, `validate`, `test`, `predict`, `inference`, ...), with "
        "no `torch.no_grad()`/`torch.inference_mode()`/`torch.set_grad_enabled(False)` (or a context manager "
        "of the file that enters one around its `yield`) around it, on the "
        "function, or around a call of the function elsewhere in the file. Across the files of one run, a loop "
        "calling a method of an object built from a class of the project in the same function (`trainer = "
        "Trainer(model)` ... `for batch in dev: preds += trainer.predict(batch)`) evaluates when that method "
        "puts a model in eval mode and runs it with grad on (the innermost such loop is reported, also in "
        "a training function). Functions that need gradients "
        "(`.backward()`, `torch.autograd.grad`, `requires_grad_()`, an optimizer step, `torch.enable_grad()`), "
        "Lightning's `validation_step`/`test_step`/`predict_step` (Lightning disables grad itself) and test "
        "code are not reported. Where nothing was put in eval mode, the loop must also handle tensors (a "
        "`torch` call, `.to(device)`, `.cpu()`, `.detach()`, ...): a callable named `model` may be a "
        "high-level predictor that manages grad mode itself."
    )
    why = (
        "`model.eval()` changes how dropout and batch normalisation behave; it does not turn autograd off. "
        "While grad mode is on, every operation on parameters that require grad records a node in the "
        "autograd graph and saves the tensors its backward would need, and they stay alive for as long as "
        "the output is referenced. An evaluation loop never calls `backward()`, so that bookkeeping is pure "
        "overhead: more memory at the peak (activations of the whole forward instead of one layer at a "
        "time), and more time to record the graph. Under `torch.no_grad()` nothing is recorded; "
        "`torch.inference_mode()` also skips the version counters of the tensors it makes."
    )
    example = Invalid("""
        import torch

        def evaluate(model, loader):
            model.eval()
            correct = 0
            for x, y in loader:  # expect: TL701
                correct += (model(x).argmax(1) == y).sum().item()
            return correct
    """)
    use_instead = Valid("""
        import torch

        @torch.no_grad()
        def evaluate(model, loader):
            model.eval()
            correct = 0
            for x, y in loader:
                correct += (model(x).argmax(1) == y).sum().item()
            return correct
    """)
    fix_safety = (
        "No fix is offered: it would wrap the loop in a new `with` block and indent it. Of the two wraps, "
        "`torch.no_grad()` is the safe one; a tensor made under `torch.inference_mode()` cannot be used in "
        "autograd later (saving it for backward raises), so inference mode is only right where the outputs "
        "never reach training code. Either changes what callers see if they back-propagate through the "
        "returned outputs, which this rule cannot see across files."
    )
    valid = (
        Valid("""
            import torch
            from torch import nn
            def evaluate_checkpoints(model, paths, tokenizer, prompts):
                model.eval()
                for path in paths:
                    model.load_state_dict(torch.load(path))  # nn.Module's own method: no forward
                for prompt in prompts:
                    print(model.generate(tokenizer(prompt)))  # transformers' generate turns grad off itself
            class Encoder(nn.Module):
                def encode_all(self, batches):
                    self.eval()
                    outputs = []
                    for batch in batches:
                        features = self.preprocess(batch)  # a method of self: not the forward
                        with torch.inference_mode():
                            outputs.append(self(features))
                    return outputs
        """),
        Valid("""
            import torch
            class ValLoop:
                def run(self):
                    self.runner.model.eval()
                    for idx, batch in enumerate(self.dataloader):
                        self.run_iter(idx, batch)

                @torch.no_grad()
                def run_iter(self, idx, batch):
                    self.outputs.append(self.runner.model(batch))
        """),
        Valid("""
            import torch
            class LRFinder:
                def range_test(self, batches):
                    self.model.eval()
                    for batch in batches:
                        self.losses.append(self._train_batch(batch))  # trains: needs gradients
                def _train_batch(self, batch):
                    loss = self.criterion(self.model(batch.cuda()))
                    loss.backward()
                    self.optimizer.step()
                    return loss.item()
        """),
        Valid("""
            import torch
            def evaluate(model, loader):
                model.eval()
                with torch.no_grad():
                    for x, y in loader:
                        out = model(x)
        """),
        Valid("""
            import contextlib
            import torch

            class Model:
                @contextlib.contextmanager
                def _set_training_mode(self, training):
                    self.network.train(training)
                    with torch.set_grad_enabled(training):
                        yield

                def evaluate(self, loader):
                    with self._set_training_mode(False):  # grad is off inside
                        for x, y in loader:
                            out = self.network(x)
        """),
        Valid("""
            import torch
            @torch.inference_mode()
            def predict(self, loader):
                self.network.eval()
                return [self.network(x) for x in loader] + [self.network(x) for x in loader]
        """),
        Valid("""
            import torch
            def validate(self, loader):
                self.model.eval()
                for batch in loader:
                    with torch.no_grad():
                        out = self.model(batch)
                    self.log(out)
        """),
        Valid("""
            import torch
            def _eval_loop(model, loader):
                model.eval()
                for x in loader:
                    yield model(x)

            @torch.inference_mode()
            def evaluate(model, loader):
                return list(_eval_loop(model, loader))
        """),
        Valid("""
            import torch
            class Trainer:
                def validate_epoch(self, loader):
                    self.model.eval()
                    for batch in loader:
                        self.model(batch)

                def fit(self):
                    for epoch in range(10):
                        self.train_epoch()
                        with torch.no_grad():
                            self.validate_epoch(self.val_loader)
        """),
        Valid("""
            import torch
            class Classifier(LightningModule):
                def validation_step(self, batch, batch_idx):
                    for x in batch:
                        self.model(x)
        """),
        Valid("""
            import torch
            def pgd_attack(model, images, labels, steps):
                model.eval()
                for _ in range(steps):
                    images.requires_grad_()
                    loss = F.cross_entropy(model(images), labels)
                    grad = torch.autograd.grad(loss, images)[0]
                    images = images + alpha * grad.sign()
        """),
        Valid("""
            import torch
            def saliency(model, loader):
                model.eval()
                for x, y in loader:
                    x.requires_grad_(True)
                    model(x)[0, y].backward()
                    maps.append(x.grad.abs())
        """),
        Valid("""
            import torch
            def test_time_adaptation(model, optimizer, loader):
                model.eval()
                for x in loader:
                    loss = entropy(model(x))
                    loss.backward()
                    optimizer.step()
        """),
        Valid("""
            import torch
            def train(model, loader, optimizer):
                model.eval()
                for x, y in loader:
                    loss = criterion(model(x), y)
                    loss.backward()
                    optimizer.step()
        """),
        Valid("""
            import torch
            def evaluate(model, loader):
                model.eval()
                with torch.set_grad_enabled(False):
                    for x in loader:
                        model(x)
        """),
        Valid("""
            import torch
            @smart_inference_mode()
            def run(model, dataloader):
                model.eval()
                for im, targets in dataloader:
                    preds = model(im)
        """),
        Valid("""
            import torch
            from monai.networks.utils import eval_mode
            def run_interaction(network, inputs):
                with eval_mode(network):
                    for _ in range(3):
                        network(inputs)
        """),
        Valid("""
            import torch
            def evaluate_policy(model, env, episodes):
                for _ in range(episodes):
                    action, state = model.predict(obs)
        """),
        Valid("""
            import pytest
            import torch
            def test_model_runs(model, loader):
                model.eval()
                for x in loader:
                    assert model(x).shape == (2, 3)
        """),
        Valid("""
            import torch
            def predict(loader, transform):
                for x in loader:
                    transform(x)
        """),
        Valid("""
            import torch
            from ultralytics import YOLO
            class Inference:
                def image_inference(self):
                    self.model = YOLO(self.model_path)
                    for path in self.paths:
                        results = self.model(cv2.imread(path), conf=self.conf)
        """),
        Valid("""
            import torch
            class Runner:
                def validate(self, configs):
                    for cfg in configs:
                        self.validate_single_model(config=cfg)

                def after_validate(self):
                    for m in flatten_model(self.model):
                        m.eval()
        """),
        Valid("""
            import torch
            def explain(model, x, target):
                model.eval()
                with torch.enable_grad():
                    for layer in layers:
                        cam = grad_cam(model, layer, x, target)
        """),
    )
    invalid = (
        Invalid("""
            import torch
            def test_env(env, model, device):  # the script's test episode, not a pytest test
                state, done, total = env.reset(), False, 0.0
                while not done:  # expect: TL701
                    dist, _ = model(torch.FloatTensor(state).unsqueeze(0).to(device))
                    state, reward, done, _ = env.step(dist.sample().cpu().numpy()[0])
                    total += reward
                return total
        """),
        Invalid("""
            import torch
            def detect(weights, images, device):
                detector = torch.load(weights).to(device).eval()
                for image in images:  # expect: TL701
                    yield detector(torch.from_numpy(image).to(device))
        """),
        Invalid("""
            import torch
            def predict(model, loader):
                model.eval()
                scores = []
                for batch in loader:  # expect: TL701
                    scores.append(model.predict(batch["x"]).cpu())
                return scores
        """),
        Invalid("""
            import torch
            def explain(model, loader, device):
                model.eval()
                backbone = list(model.deeptabular.children())[0]
                masks = []
                for batch in loader:  # expect: TL701
                    m, _ = backbone.forward_masks(batch.to(device))
                    masks.append(m.cpu().detach())
                return masks
        """),
        Invalid("""
            import torch
            class TabModel:
                def _predict_epoch(self, loader):
                    self.network.eval()
                    scores = []
                    for X, y in loader:  # expect: TL701
                        scores.append(self._predict_batch(X))
                    return scores
                def _predict_batch(self, X):
                    return self.network(X.to(self.device).float()).cpu().detach().numpy()
        """),
        Invalid("""
            import torch
            def predict(self, X):
                self.network.eval()
                results = []
                for batch_nb, data in enumerate(loader):  # expect: TL701
                    output, M_loss = self.network(data.to(self.device).float())
                    results.append(output.cpu().detach().numpy())
                    for extra in range(2):
                        self.network.forward_masks(data)
                return results
        """),
        Invalid("""
            import torch
            def main():
                model = build_model()
                model.eval()
                for idx, batch in enumerate(data_loader):  # expect: TL701
                    outputs = model.forward(batch)
                model.train()
        """),
        Invalid("""
            import torch
            class Evaluator:
                def validate(self, loader):
                    total = 0.0
                    while loader.has_next():  # expect: TL701
                        total += self.net(loader.next()).sum().item()
                    return total
        """),
    )

    def __init__(self, ctx, sink) -> None:
        super().__init__(ctx, sink)
        self._no_grad_depth = 0
        self._entered: List[bool] = []  # per function or `with`: did it turn grad off?
        self._eval_receivers: Dict[Scope, Set[str]] = {}  # function -> what it called `.eval()` on
        self._needs_grad: Dict[int, bool] = {}  # id(function node) -> does it need gradients
        self._reported: Set[int] = set()  # ids of loops reported
        self._called_without_grad: Set[str] = set()  # names of functions called under no-grad
        self._candidates: List[Tuple[cst.CSTNode, str]] = []  # (loop, its function's name)

    # ---- grad mode ---------------------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._enter(any(self._disables_grad(decorator.decorator) for decorator in node.decorators))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._offer_if_evaluates(node, self.ctx.scope_left(node))
        self._leave()

    def visit_With(self, node: cst.With) -> None:
        self._enter(any(self._disables_grad(item.item) for item in node.items))

    def leave_With(self, node: cst.With) -> None:
        self._leave()

    def _enter(self, off: bool) -> None:
        self._entered.append(off)
        self._no_grad_depth += off

    def _leave(self) -> None:
        self._no_grad_depth -= self._entered.pop()

    def _disables_grad(self, expression: cst.BaseExpression, ahead: bool = False) -> bool:
        """``torch.no_grad()``, ``torch.inference_mode()`` (or a wrapper named like them),
        ``torch.set_grad_enabled(False)``: any argument but a literal ``True``. ``ahead``: the
        expression lies ahead of the walk (see ``ctx.qualname_ahead``)."""
        call = expression if isinstance(expression, cst.Call) else None
        func = call.func if call else expression
        name = (self.ctx.qualname_ahead(func) if ahead else self.ctx.qualname(func)) or dotted_name(func)
        if name is None:
            return False
        own = self.ctx.function_here(func) if call is not None and not ahead else None
        if own is not None:
            return self._grad_free_context(own, call)
        last = name.rsplit(".", 1)[-1]
        if last == "set_grad_enabled" and call is not None:
            return not any(literal_value(arg.value) is True for arg in call.args)
        return bool(_NO_GRAD.search(last))

    def _grad_free_context(self, function: cst.FunctionDef, call: cst.Call) -> bool:
        """``with self._set_training_mode(False):``: a ``@contextmanager`` of the file that wraps
        its ``yield`` in a context disabling grad (``with torch.set_grad_enabled(training):``),
        called with no literal ``True``."""
        if any(literal_value(arg.value) is True for arg in call.args) or not any(
            self.ctx.qualname(decorator.decorator) == "contextlib.contextmanager" for decorator in function.decorators
        ):
            return False
        return any(
            isinstance(node, cst.With) and any(isinstance(inner, cst.Yield) for inner in descendants(node.body))
            and any(self._disables_grad(item.item, ahead=True) for item in node.items)
            for node in descendants(function.body)
        )

    # ---- what the function does ----------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if self._no_grad_depth and isinstance(func, (cst.Name, cst.Attribute)):
            self._called_without_grad.add(func.value if isinstance(func, cst.Name) else func.attr.value)
        if isinstance(func, cst.Attribute) and _puts_in_eval_mode(node):
            # model.eval(), or model = build(cfg).to(device).eval(): the name holds the model in eval mode
            receiver = dotted_name(func.value) or assigned_name(self.ctx.parent, node)
            if receiver is not None:
                self._eval_receivers.setdefault(self.ctx.scope.function, set()).add(receiver)
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and not self._no_grad_depth:
            self._check_evaluating_call(node, func)

    def _offer_if_evaluates(self, node: cst.FunctionDef, function: Scope) -> None:
        """Tell the other modules of a method that puts a model in eval mode and runs it with
        grad on (``self.model.eval()`` ... ``self.model(x)`` in ``Trainer.predict``)."""
        receivers = self._eval_receivers.get(function)
        if not receivers or self._no_grad_depth or self._needs_grad_in(node):
            return
        key = self.ctx.qualified_name(function)
        if key is not None and self._runs_model(node.body, receivers)[0]:
            self.ctx.offer(f"{key}{_EVALUATES}", "yes")

    def _check_evaluating_call(self, call: cst.Call, func: cst.Attribute) -> None:
        """A call, in a loop, of a method of an object of a project class built in the same
        function (``trainer = Trainer(...)`` ... ``trainer.predict(batch)``) that its module
        says runs a model in eval mode with grad on: the innermost such loop evaluates."""
        ctx = self.ctx
        built = ctx.value_of(func.value.value)
        cls = ctx.project_callee(built.func) if type(built) is cst.Call else None
        if cls is None:
            return
        function = ctx.scope.function
        if not _may_evaluate(function) or ctx.scope.kind != "loop" or self._in_reported_loop():
            return
        if ctx.need(f"{cls}.{func.attr.value}{_EVALUATES}") is None:
            return
        if not ctx.is_test_module and not self._needs_grad_in(function.node):
            self._add_candidate(ctx.scope.node, function)

    def leave_Assign(self, node: cst.Assign) -> None:
        """``backbone = list(model.encoder.children())[0]`` after ``model.eval()``: a part of the
        model is in eval mode too."""
        receivers = self._eval_receivers.get(self.ctx.scope.function) if self._eval_receivers else None
        if receivers and _part_of(node.value, receivers):
            receivers.update(target.target.value for target in node.targets if isinstance(target.target, cst.Name))

    def visit_For(self, node: cst.For) -> None:
        self._check(node)

    def visit_While(self, node: cst.While) -> None:
        self._check(node)

    def _check(self, loop: cst.CSTNode) -> None:
        ctx = self.ctx
        function = ctx.scope.function
        if self._no_grad_depth or not _may_evaluate(function) or self._in_reported_loop():
            return
        receivers = self._eval_receivers.get(function, set())
        if not (receivers or _EVAL_FUNCTION.search(function.name.lower())):
            return
        if ctx.is_test_module or self._needs_grad_in(function.node):
            return
        runs_model, handles_tensors = self._runs_model(loop, receivers)
        if not runs_model or not (receivers or handles_tensors):
            return
        self._add_candidate(loop, function)

    def _add_candidate(self, loop: cst.CSTNode, function: Scope) -> None:
        """Report ``loop`` at the end of the file, unless a call of ``function`` turns grad off."""
        self._reported.add(id(loop))
        self._candidates.append((loop, function.name))

    def _in_reported_loop(self) -> bool:
        return any(id(loop.node) in self._reported for loop in loops_around(self.ctx.scope))

    def leave_Module(self, node: cst.Module) -> None:
        for loop, function_name in self._candidates:  # every call site of the function is seen now
            if function_name not in self._called_without_grad:
                self.report(loop)

    def _needs_grad_in(self, function: cst.CSTNode) -> bool:
        """Does the function back-propagate, take gradients or an optimizer step, ask inputs to
        require grad, or turn grad on?"""
        found = self._needs_grad.get(id(function))
        if found is None:
            found = self._needs_grad[id(function)] = any(self._grad_use(node) for node in descendants(function))
        return found

    def _grad_use(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Call):
            if is_training_step_call(node.func):
                return True
            name = self.ctx.qualname_ahead(node.func) or dotted_name(node.func) or ""  # a scan ahead of the walk
            last = name.rsplit(".", 1)[-1]
            return (
                last in ("requires_grad_", "enable_grad", "manual_backward")
                or name.endswith("autograd.grad")
                or (last == "set_grad_enabled" and not self._disables_grad(node, ahead=True))
            )
        if isinstance(node, cst.Assign):
            return any(
                isinstance(target.target, cst.Attribute) and target.target.attr.value == "requires_grad"
                for target in node.targets
            )
        return False

    def _runs_model(self, loop: cst.CSTNode, receivers: Set[str], depth: int = 0) -> Tuple[bool, bool]:
        """Does the loop call the model (not under a no-grad block of its own, nor in a nested
        function), also through a function of the file it calls (``scores = self._predict_batch(X)``),
        and does it handle tensors (a ``torch`` call, ``.to(device)``, ``.cpu()``, ...)? A loop whose
        helper needs gradients (``self._train_batch(...)``) trains: (False, False)."""
        runs_model = handles_tensors = False
        stack = list(iter_children(loop))
        while stack:
            node = stack.pop()
            if isinstance(node, _NESTED):
                continue
            if isinstance(node, cst.With) and any(self._disables_grad(item.item, ahead=depth > 0) for item in node.items):
                continue
            if isinstance(node, cst.Call):
                runs_model = runs_model or _calls_model(node, receivers)
                qualname = self.ctx.qualname(node.func) if depth == 0 else self.ctx.qualname_ahead(node.func)
                handles_tensors = handles_tensors or (
                    isinstance(node.func, cst.Attribute) and node.func.attr.value in _TENSOR_METHODS
                ) or (qualname or "").startswith("torch.")
                helper = self.ctx.function_here(node.func) if depth == 0 and not runs_model else None
                if helper is not None and any(self._disables_grad(d.decorator, ahead=True) for d in helper.decorators):
                    helper = None  # @torch.no_grad() def run_iter(...): its calls record nothing
                if helper is not None:
                    if self._needs_grad_in(helper):
                        return False, False
                    in_helper = self._runs_model(helper.body, receivers, depth + 1)
                    runs_model, handles_tensors = runs_model or in_helper[0], handles_tensors or in_helper[1]
            stack.extend(iter_children(node))
        return runs_model, handles_tensors


def _puts_in_eval_mode(call: cst.Call) -> bool:
    """``model.eval()`` or ``model.train(False)``."""
    method = call.func.attr.value
    if method == "eval":
        return not call.args
    arguments = positional(call)
    return method == "train" and len(arguments) == 1 and literal_value(arguments[0].value) is False


def _part_of(value: cst.BaseExpression, receivers: Set[str]) -> bool:
    """Is ``value`` a part of an object in ``receivers``: ``model.encoder``,
    ``list(model.children())[0]``, ``getattr(self.model, "head")``?"""
    while True:
        if isinstance(value, cst.Subscript):
            value = value.value
        elif isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in _PARTS:
            value = value.func.value  # model.children(), model.get_submodule("head")
        elif isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in _PART_TAKERS \
                and value.args:
            value = value.args[0].value
        else:
            break
    parts = (dotted_name(value) or "").split(".")
    return any(".".join(parts[:end]) in receivers for end in range(1, len(parts) + 1))


def _may_evaluate(function: Scope) -> bool:
    """Can ``function`` hold an evaluation loop: a function, not a Lightning step, hook or test?"""
    return function.kind == "function" and function.name not in STEP_METHODS and not _NOT_EVAL.search(function.name)


def _calls_model(call: cst.Call, receivers: Set[str]) -> bool:
    """``model(x)``, ``self.net(x)``, ``model.forward(x)`` where the callee is what was put in
    eval mode or is named ``model``, ``net`` or ``network``; ``self.model.predict(batch)``, a
    prediction method, given arguments, of what was put in eval mode (not of ``self``:
    a method of the file is followed to what it does)."""
    func = call.func
    method = func.attr.value if isinstance(func, cst.Attribute) else ""
    if method == "forward" or method.startswith("forward_"):
        func = func.value
    elif method and call.args and _PREDICTS.match(method) and not is_name(func.value, "self") \
            and dotted_name(func.value) in receivers:
        return True
    name = dotted_name(func)
    return name is not None and (name in receivers or name.rsplit(".", 1)[-1] in _MODEL)
