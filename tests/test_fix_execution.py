"""Fixes proven by running the code: every fixable case (tests/fix_cases/*.py, each with a
``run()``, and every rule example with a fix) runs before and after ``--fix`` on the CPU,
CUDA mapped to the CPU. A safe fix must compute the same (values, dtypes, shapes,
``requires_grad`` and leaf status, the same exceptions); an unsafe one must at least run."""

import contextlib
import functools
import os
import textwrap
import types

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

from torchlint.fixes import fix_text  # noqa: E402
from torchlint.linter import lint_text  # noqa: E402
from torchlint.rules import ALL_RULES  # noqa: E402

CASES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fix_cases")
CASE_FILES = sorted(name for name in os.listdir(CASES) if name.endswith(".py"))
_FACTORIES = "zeros ones empty full arange linspace logspace eye randn rand randint randperm tensor as_tensor".split()


def _on_cpu(device):
    if isinstance(device, torch.device) and device.type == "cuda":
        return torch.device("cpu")
    if isinstance(device, str) and device.startswith("cuda"):
        return "cpu"
    return device


@contextlib.contextmanager
def cuda_on_cpu():
    """Run code written for CUDA on the CPU: `.cuda()`, `.to("cuda")` and `device="cuda"` land on the CPU."""
    saved = {name: getattr(torch, name) for name in _FACTORIES}
    saved_to, saved_cuda = torch.Tensor.to, torch.Tensor.cuda

    def factory(original):
        @functools.wraps(original)
        def wrapped(*args, **kwargs):
            if "device" in kwargs:
                kwargs["device"] = _on_cpu(kwargs["device"])
            return original(*args, **kwargs)
        return wrapped

    def to(self, *args, **kwargs):
        args = tuple(_on_cpu(arg) for arg in args)
        if "device" in kwargs:
            kwargs["device"] = _on_cpu(kwargs["device"])
        return saved_to(self, *args, **kwargs)

    for name, original in saved.items():
        setattr(torch, name, factory(original))
    torch.Tensor.to = to
    torch.Tensor.cuda = lambda self, device=None, non_blocking=False, **kwargs: self
    try:
        yield
    finally:
        for name, original in saved.items():
            setattr(torch, name, original)
        torch.Tensor.to, torch.Tensor.cuda = saved_to, saved_cuda


def execute(text):
    """Run ``text`` as a module and call its ``run()``: (result, exception type)."""
    module = types.ModuleType("fix_case")
    torch.manual_seed(0)
    try:
        with cuda_on_cpu():
            exec(compile(text, "fix_case.py", "exec"), module.__dict__)
            result = module.run()
        return result, None
    except Exception as error:  # the same exception before and after counts as the same behaviour
        return None, type(error)


def _comparable(value):
    return isinstance(value, (torch.Tensor, int, float, bool, tuple, list))


def same(a, b):
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (
            isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
            and a.dtype == b.dtype and a.shape == b.shape and a.device == b.device
            and a.requires_grad == b.requires_grad and a.is_leaf == b.is_leaf
            and torch.equal(a.detach(), b.detach())
        )
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


def fixed(text, unsafe):
    lint = lambda source: lint_text(source, "fix_case.py", ALL_RULES)  # noqa: E731
    return fix_text(text, lint, unsafe).text


def check(text, raises=None):
    before, error = execute(text)
    if raises is not None:
        assert error is raises, f"the case no longer raises {raises.__name__}"
    safe = fixed(text, unsafe=False)
    after, safe_error = execute(safe)
    if raises is not None and safe != text:
        assert safe_error is None, "a safe fix of code that raised must make it run"
    else:
        assert safe_error is error, f"a safe fix changed the exception: {error} -> {safe_error}"
        assert same(before, after), "a safe fix changed what the code computes"
    everything = fixed(text, unsafe=True)
    _, unsafe_error = execute(everything)
    assert unsafe_error is None or unsafe_error is error, f"an unsafe fix made the code fail: {unsafe_error}"


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", CASE_FILES)
def test_fix_case_behaves(name):
    with open(os.path.join(CASES, name), encoding="utf-8") as handle:
        text = handle.read()
    namespace = {}
    exec(compile("\n".join(line for line in text.splitlines() if line.startswith("ORIGINAL_RAISES")), name, "exec"),
         namespace)
    check(text, raises=namespace.get("ORIGINAL_RAISES"))
    assert lint_text(text, name, ALL_RULES).diagnostics, "a fix case must have findings"


# Values for the free names of rule examples (`perm = torch.randperm(n).to(device)`).
def _example_namespace():
    return {
        "n": 6, "b": 2, "t": 3, "device": torch.device("cuda"), "dev": "cuda", "index": [0, 1],
        "x": torch.randn(2, 3), "img": np.arange(24, dtype=np.uint8).reshape(2, 4, 3),
        "a": np.arange(6.0).reshape(2, 3), "w": np.arange(6.0).reshape(2, 3),
        "ds": torch.utils.data.TensorDataset(torch.arange(8.0)), "step": lambda batch: None,
    }


FIXABLE = [(rule, i, example) for rule in ALL_RULES for i, example in enumerate(rule.invalid) if example.fixed]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("rule,index,example", FIXABLE, ids=[f"{r.code}-invalid-{i}" for r, i, _ in FIXABLE])
def test_rule_example_fix_behaves(rule, index, example):
    """Module-level example code runs with its free names bound; examples that only define
    classes and functions run their definitions (the fix must not break them)."""
    header = "".join(f"{name} = __values__[{name!r}]\n" for name in _example_namespace())
    text = header + example.source
    before, error = _run_with_values(text)
    after, after_error = _run_with_values(fixed(text, unsafe=False))
    if error is not None and error is rule.raises:
        assert after_error is None, "the fix of code that raised what the rule finds must make it run"
        return
    assert after_error is error, f"a safe fix changed the exception: {error} -> {after_error}"
    if error is None:
        assert same(_comparables(before), _comparables(after)), "a safe fix changed what the example computes"
    _, unsafe_error = _run_with_values(fixed(text, unsafe=True))
    assert unsafe_error is None or unsafe_error is error, f"the fix made the example fail: {unsafe_error}"


def _comparables(namespace):
    return {name: value for name, value in namespace.items() if not name.startswith("_") and _comparable(value)}


def _run_with_values(text):
    module = types.ModuleType("example")
    torch.manual_seed(0)
    module.__dict__["__values__"] = _example_namespace()
    try:
        with cuda_on_cpu():
            exec(compile(text, "example.py", "exec"), module.__dict__)
        return vars(module), None
    except Exception as error:
        return None, type(error)


def test_the_harness_sees_a_changed_result():
    text = textwrap.dedent("""
        import torch
        def run():
            return torch.arange(0, 1, 0.25).to("cpu", torch.long)
    """)
    changed = text.replace('.to("cpu", torch.long)', "").replace("0.25)", "0.25, dtype=torch.long)")
    assert not same(execute(text)[0], execute(changed)[0]) or execute(changed)[1] is not None
