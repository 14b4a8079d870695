"""Shared facts the data-loading and layout rules rely on, checked through lint_text."""

import libcst as cst
import pytest

from torchlint.context.facts import occasional_branch, off_gpu_branch, once_only_branch, reaching_code
from torchlint.linter import lint_text
from torchlint.rules import RULES_BY_CODE

LOADER = "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=8)\n"


def codes(text, path="train.py", code="TL501"):
    return [d.code for d in lint_text(text, path, [RULES_BY_CODE[code]]).diagnostics]


@pytest.mark.parametrize("path", ["tests/data/loaders.py", "pkg/test_utils/scripts/run.py", "conftest.py",
                                  "pkg\\tests\\x.py", "pkg/utils/unittests/model_tests.py"])
def test_test_code_is_recognised_by_path(path):
    assert codes(LOADER, path) == []


@pytest.mark.parametrize("tests", ["def test_loader():\n    pass\n", "class TestLoader:\n    pass\n"])
@pytest.mark.parametrize("path", ["test_train.py", "pkg/train_test.py"])
def test_a_test_file_is_one_named_so_that_defines_tests(tests, path):
    assert codes(LOADER + tests, path) == []


@pytest.mark.parametrize("tests", ["", "class TestTimeAugmentation:\n    def __init__(self):\n        pass\n"])
def test_a_test_name_without_tests_is_not_test_code(tests):
    """``test_time_augmentation.py`` holds a transform: pytest would collect nothing from it."""
    assert codes(LOADER + tests, "monai/data/test_time_augmentation.py") == ["TL501"]


@pytest.mark.parametrize("path", ["train.py", "latest/train.py", "contest.py", "attest_utils/x.py"])
def test_other_paths_are_not_test_code(path):
    assert codes(LOADER, path) == ["TL501"]


def test_reassignment_chain_is_followed_in_order():
    chain = ("import torch\n\ndef load(img):\n    img = img[:, ::-1]\n    img = img.transpose(2, 0, 1)\n"
             "    img = img.swapaxes(1, 2)\n    return torch.from_numpy(img)\n")
    assert codes(chain, code="TL301") == ["TL301"]
    copied = chain.replace("    img = img.transpose(2, 0, 1)\n", "    img = img.copy()\n")
    assert codes(copied, code="TL301") == []


def test_dataset_through_self_attribute_and_subset():
    text = ("import torch\nfrom torch.utils.data import DataLoader, Dataset, Subset\n\n"
            "class Random(Dataset):\n    def __init__(self):\n        self.data = torch.randn(64, 4)\n\n"
            "    def __getitem__(self, i):\n        return self.data[i]\n\n"
            "class Module:\n    def __init__(self):\n        self.full = Random()\n\n"
            "    def setup(self):\n        self.train = Subset(self.full, range(32))\n\n"
            "    def train_dataloader(self):\n        return DataLoader(self.train)\n")
    assert codes(text) == []
    assert codes(text.replace("return self.data[i]", "return load(self.data[i])")) == ["TL501"]


@pytest.mark.parametrize("name", ["l1_loss", "compute_loss", "contrastive_loss_fn", "loss", "dice_losses"])
def test_loss_functions_are_hot(name):
    from torchlint.context.scopes import MODEL, function_hotness

    assert function_hotness(name, None, frozenset())[1] == MODEL


@pytest.mark.parametrize("name", ["build_loss", "get_loss", "create_classification_loss", "evaluate_loss",
                                  "estimate_loss", "val_loss", "test_loss", "plot_loss", "get_best_loss",
                                  "_check_nan_inf_loss", "__log_loss"])
def test_loss_builders_and_evaluations_are_not_hot(name):
    from torchlint.context.scopes import function_hotness

    assert function_hotness(name, None, frozenset()) == (None, None)


@pytest.mark.parametrize("test, branch", [
    ("x.is_cpu", "body"),
    ("x.is_cuda", "orelse"),
    ("not x.is_cuda", "body"),
    ("x.is_cuda or fused", "orelse"),  # the else runs only when x is not on the GPU
    ("x.is_cuda and fused", None),
    ("x.is_cpu and small", "body"),
    ("x.is_cpu or small", None),
    ("x.is_cpu or x.is_mps", "body"),
    ("not (x.is_cuda or fused)", "body"),
])
def test_which_branch_runs_only_off_the_gpu(test, branch):
    assert off_gpu_branch(cst.parse_expression(test)) == branch


@pytest.mark.parametrize("code, once", [
    ("if not self._checked:\n    self._checked = True\n", True),  # sets the flag it tests
    ("if self._first: self._first = False\n", True),
    ("if not self._checked:\n    self.other = True\n", False),
    ("if self._checked:\n    self._checked = flag\n", False),
    ("if self.running_hyps is None:\n    self.running_hyps = init(x)\n", True),  # fills what it finds unset
    ("if not self.cache:\n    self.cache = build()\n", True),
    ("if self.count is None:\n    self.other = 1\n", False),
    ("if x is None:\n    y = 1\n", False),
])
def test_a_branch_that_sets_what_it_tests_runs_once(code, once):
    statement = cst.parse_statement(code)
    assert once_only_branch(statement.test, statement.body) is once


@pytest.mark.parametrize("test, branch", [
    ("self.debug", "body"),
    ("step % 100 == 0", "body"),
    ("(it + 1) % args.print_freq == 0", "body"),
    ("not batch_idx % self.log_every", "body"),
    ("self.global_step % log_interval != 0", "orelse"),
    ("torch.isnan(loss).any()", "body"),
    ("not torch.isfinite(cost).all().item()", "body"),
    ("bool(x.isfinite().all())", "orelse"),
    ("not (torch.isfinite(a) & torch.isfinite(b)).all()", "body"),
    ("(torch.isfinite(a) & (a > 0)).all()", None),
    ("lqs.size(1) % 2 == 0", None),  # a shape, not a step counter
    ("step % 2 == 0", None),  # every other step
    ("(step + 1) % accumulation_steps == 0", None),  # the optimizer step of gradient accumulation
    ("x.any()", None),
    ("state['step'] == 0", "body"),
    ("self.global_step == 0", "body"),
    ("i == 0", None),  # the first element of a loop, every call
])
def test_a_branch_that_runs_only_now_and_then(test, branch):
    assert occasional_branch(cst.parse_expression(test), lambda node: None) == branch


def test_what_a_test_calls_or_names_is_resolved():
    returned = {"self._should_log()": "self.count % self.log_freq == 0", "finite": "torch.isfinite(c)"}

    def resolve(node):
        code = cst.Module([]).code_for_node(node)
        return cst.parse_expression(returned[code]) if code in returned else None

    assert occasional_branch(cst.parse_expression("self._should_log()"), resolve) == "body"
    assert occasional_branch(cst.parse_expression("not finite.all()"), resolve) == "body"


def test_the_forward_of_a_data_transform_is_preprocessing_not_the_model():
    from torchlint.context.scopes import MODEL, function_hotness

    assert function_hotness("forward", "Distance", frozenset(), ("BaseTransform",)) == (None, None)
    assert function_hotness("forward", "Block", frozenset(), ("nn.TransformerEncoderLayer",))[1] == MODEL


def test_a_branch_that_warns_handles_an_abnormal_case():
    from torchlint.context.facts import warning_branch

    assert warning_branch(cst.parse_statement("if n < 1:\n    logging.warning('skip')\n    return 0\n").body)
    assert not warning_branch(cst.parse_statement("if n < 1:\n    return 0\n").body)


DRAWING_HELPER = '''
import torch
from lightning import LightningModule
class Forecaster(LightningModule):
    def training_step(self, batch, batch_idx):
        out = self(batch)
        self.plot_prediction(out)
        return self.loss(out, batch["y"])
    def evaluate(self, loader):
        self.eval()
        for batch in loader:
            self.plot_prediction(batch)
    def plot_prediction(self, out: torch.Tensor):
        from matplotlib import pyplot as plt
        for series in out:
            y = series.detach().cpu()
            plt.plot(y[: int(y.argmax())])
'''


def test_a_rule_reading_a_function_ahead_of_the_walk_leaves_its_names_unresolved_for_later():
    """TL701 reads plot_prediction while the walk is still in evaluate, before its local
    matplotlib import: that must not fix `plt.plot` as unresolved, or the drawing function
    would not turn cold and TL201 would report its host copies."""
    rules = [RULES_BY_CODE["TL201"], RULES_BY_CODE["TL701"]]
    assert [d.code for d in lint_text(DRAWING_HELPER, "model.py", rules).diagnostics] == []


@pytest.mark.parametrize("name, hot", [
    ("FocalLoss", True), ("SetCriterion", True), ("IOUloss", True), ("F1_loss", True),
    ("ColossalAIStrategy", False), ("GlossaryBuilder", False),
])
def test_the_call_of_a_class_named_like_a_loss_is_hot(name, hot):
    from torchlint.context.scopes import MODEL, function_hotness

    assert (function_hotness("__call__", name, frozenset())[1] == MODEL) is hot


@pytest.mark.parametrize("comprehension", [
    "        names = [t for t in self.tags]\n",
    "        if flag:\n            names = {t: 1 for t in self.tags}\n",
    "        names = [t for s in self.groups for t in s]\n",
])
def test_a_comprehension_binds_its_variables_for_itself_only(comprehension):
    """After ``[t for t in tags]``, ``t`` is the function's tensor again (Python 3 scoping)."""
    text = ("import torch\nfrom torch import nn\n\nclass Head(nn.Module):\n    def forward(self, x, flag):\n"
            "        t = x.sum()\n" + comprehension + "        if t > 0:\n            return x\n        return -x\n")
    assert codes(text, "model.py", "TL201") == ["TL201"]


REBOUND = """
def f(x, flag):
    h = x.size(0) / 2
    if flag:
        h = h + 1
    for step in range(3):
        y = h * step
        h = torch.relu(y)
    h = torch.tanh(h)
    return h
"""


@pytest.mark.parametrize("binding, reached", [
    (0, ["if flag:", "for step in range(3):", "torch.tanh(h)"]),  # a rebinding in a branch may not run
    (1, ["for step in range(3):", "torch.tanh(h)"]),
    (2, ["for step in range(3):", "torch.tanh(h)"]),  # a loop's binding reaches the loop's start again
    (3, ["return h"]),
])
def test_the_code_a_binding_reaches_ends_where_every_path_rebinds_the_name(binding, reached):
    module = cst.parse_module(REBOUND)
    function = module.body[0]
    values = [node.value for node in _assignments(function) if node.targets[0].target.value == "h"]
    code = reaching_code(function, values[binding], "h")
    assert [module.code_for_node(node).strip().splitlines()[0] for node in code] == reached


def _assignments(node):
    found = [node] if isinstance(node, cst.Assign) else []
    for child in node.children:
        found.extend(_assignments(child))
    return found


def test_a_rebinding_to_an_item_of_the_name_holds_the_same_kind_of_thing():
    """``s = s[0]`` keeps what ``s`` is: the uses after it tell about both bindings."""
    module = cst.parse_module("def f(x):\n    s = g(x)\n    s = s[0]\n    return s.detach()\n")
    function = module.body[0]
    first, second = (node.value for node in _assignments(function))
    assert [module.code_for_node(node).strip() for node in reaching_code(function, first, "s")] == [
        "s = s[0]", "return s.detach()",
    ]
    assert reaching_code(function, second, "s") is None  # the whole function
