"""Context across files: a helper that hot code in another file of the run calls is hot."""

import textwrap

import libcst as cst
import pytest

from torchlint.config import Settings
from torchlint.context.imports import module_name
from torchlint.runner import CHECK, FIX, Options, run
from torchlint.cache import Cache
from torchlint.linter import lint_text
from torchlint.rules.base import Rule
from torchlint.walker import descendants

HELPER = """
    import torch


    def hardest(dist: torch.Tensor):
        return [dist[i].max().item() for i in range(dist.shape[0])]


    def unused(dist: torch.Tensor):
        return dist.mean().item()
"""
LOSS = """
    import torch
    from torch import nn

    from .ops import hardest


    class TripletLoss(nn.Module):
        def forward(self, dist):
            return torch.tensor(hardest(dist)).mean()
"""


def write(root, files):
    for name, code in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(code))
    return sorted(str(root / name) for name in files if name.endswith(".py"))


def found(paths, **kwargs):
    outcomes = run(paths, Settings(), Options(kwargs.pop("mode", CHECK)), **kwargs)
    return sorted((o.path.rsplit("/", 1)[-1], d.line, d.code) for o in outcomes for d in o.diagnostics)


@pytest.fixture
def package(tmp_path):
    return write(tmp_path, {"pkg/__init__.py": "", "pkg/losses/__init__.py": "",
                            "pkg/losses/ops.py": HELPER, "pkg/losses/triplet.py": LOSS})


def test_a_helper_called_from_a_loss_in_another_file_is_hot(package):
    assert found(package) == [("ops.py", 6, "TL201"), ("ops.py", 6, "TL202")]


def test_alone_the_helper_is_not_hot(package):
    assert found([p for p in package if p.endswith("ops.py")]) == []


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_same_from_the_cache_and_in_parallel(package, tmp_path, jobs):
    paths = package * 2  # enough files for worker processes
    first = found(paths, jobs=jobs, cache=Cache(str(tmp_path / "cache"), Settings()))
    second = found(paths, jobs=jobs, cache=Cache(str(tmp_path / "cache"), Settings()))
    assert first == second == sorted([("ops.py", 6, "TL201"), ("ops.py", 6, "TL202")] * 2)


def test_calls_are_followed_through_helpers_of_other_modules(tmp_path):
    paths = write(tmp_path, {
        "model.py": """
            from torch import nn
            from wrap import measure

            class Net(nn.Module):
                def forward(self, x):
                    return measure(x)
        """,
        "wrap.py": """
            import torch
            import stats

            def measure(x):
                return stats.summarise(x)
        """,
        "stats.py": """
            import torch

            def summarise(x: torch.Tensor):
                return x.sum().item()
        """,
    })
    assert found(paths) == [("stats.py", 5, "TL201")]


ASSIGNER = """
    import torch

    class Assigner:
        def assign(self, cost, ks):
            match = torch.zeros_like(cost)
            for g in range(cost.shape[0]):
                match[g, torch.topk(cost[g], 3, largest=False).indices] = 1
            return match
"""


def test_a_method_of_an_object_of_another_files_class_a_forward_holds_is_hot(tmp_path):
    paths = write(tmp_path, {
        "det/__init__.py": "",
        "det/assign.py": ASSIGNER,
        "det/head.py": """
            from torch import nn
            from .assign import Assigner

            class Head(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.assigner = Assigner()

                def forward(self, cost, ks):
                    return self.assigner.assign(cost.float(), ks).sum()
        """,
    })
    assert found(paths) == [("assign.py", 7, "TL202")]


def test_a_method_of_an_object_of_another_files_class_a_loss_builds_is_hot(tmp_path):
    paths = write(tmp_path, {
        "det/__init__.py": "",
        "det/assign.py": ASSIGNER,
        "det/loss.py": """
            import torch
            from .assign import Assigner

            def detection_loss(cost, ks):
                assigner = Assigner()
                return torch.sum(assigner.assign(cost, ks))
        """,
    })
    assert found(paths) == [("assign.py", 7, "TL202")]


AGENT = """
    import torch.nn.functional as F

    class Agent:
        def __init__(self, net, optimizer):
            self.net, self.optimizer, self.priorities = net, optimizer, {}

        def learn(self, obs, actions, targets, idxs):
            q = self.net(obs).gather(1, actions).squeeze(1)
            for i, e in zip(idxs, (q - targets).abs()):
                self.priorities[i] = e.item()
            loss = F.smooth_l1_loss(q, targets)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
"""


@pytest.mark.parametrize("calls, found_there", [
    ("for _ in range(steps):\n        agent.learn(*replay.sample(32))", [("agent.py", 10, "TL202"), ("agent.py", 11, "TL201")]),
    ("agent.learn(*replay.sample(32))", []),  # once: no step of a training loop
])
def test_a_step_a_loop_in_another_file_takes_is_step_code(tmp_path, calls, found_there):
    paths = write(tmp_path, {"rl/__init__.py": "", "rl/agent.py": AGENT, "rl/train.py": f"""
import torch
from rl.agent import Agent

def main(net, replay, steps):
    agent = Agent(net, torch.optim.Adam(net.parameters()))
    {calls}
"""})
    assert found(paths) == found_there


def test_a_method_a_base_class_forward_calls_in_another_file_is_hot(tmp_path):
    paths = write(tmp_path, {
        "pml/__init__.py": "",
        "pml/base.py": """
            import torch

            class BaseMetric(torch.nn.Module):
                def forward(self, embeddings, labels):
                    return self.compute(embeddings, labels)
        """,
        "pml/margin.py": """
            import torch
            from .base import BaseMetric

            class Margin(BaseMetric):
                def compute(self, embeddings, labels):
                    total = 0
                    for label in torch.unique(labels):
                        total = total + embeddings[labels == label].norm()
                    return total
        """,
    })
    assert found(paths) == [("margin.py", 8, "TL202")]
    assert found([p for p in paths if p.endswith("margin.py")]) == []


def test_a_helper_a_subclass_forward_inherits_from_a_base_in_another_file_is_hot(tmp_path):
    paths = write(tmp_path, {
        "enc/__init__.py": "",
        "enc/base.py": """
            import torch

            class EncoderBase(torch.nn.Module):
                def sort_and_run(self, module, inputs, mask):
                    valid = torch.sum(mask[:, 0]).item()
                    return module(inputs[:valid])

                def describe(self, mask):
                    return torch.sum(mask).item()
        """,
        "enc/seq2seq.py": """
            import torch
            from enc.base import EncoderBase

            class Seq2SeqEncoder(EncoderBase):
                def describe(self, mask):
                    return "a sequence encoder"
        """,
        "enc/lstm.py": """
            import torch
            from enc.seq2seq import Seq2SeqEncoder

            class LstmEncoder(Seq2SeqEncoder):
                def forward(self, inputs, mask):
                    print(self.describe(mask))  # the middle class's own describe runs
                    return self.sort_and_run(self.lstm, inputs, mask)
        """,
    })
    assert found(paths) == [("base.py", 6, "TL201")]  # not the base's describe, which the middle class overrides
    assert found([p for p in paths if not p.endswith("lstm.py")]) == []


ENGINE = """
    import torch

    def train_one_epoch(model, data_loader, optimizer, device, metric_logger):
        for samples, targets in metric_logger.log_every(data_loader, 10, "train"):
            model(samples.to(device), targets).backward()
            optimizer.step()
"""


def test_a_loader_whose_batches_another_module_moves_is_not_pinned(tmp_path):
    paths = write(tmp_path, {"engine.py": ENGINE, "main.py": """
        from torch.utils.data import DataLoader
        from engine import train_one_epoch

        def main(dataset, model, optimizer, device, logger, workers):
            loader = DataLoader(dataset, batch_size=2, num_workers=workers, persistent_workers=True)
            for epoch in range(10):
                train_one_epoch(model, loader, optimizer, device, logger)
    """})
    assert found(paths) == [("main.py", 6, "TL503")]
    assert found([p for p in paths if p.endswith("main.py")]) == []


def test_a_loader_returned_to_a_project_that_moves_loader_batches_is_not_pinned(tmp_path):
    paths = write(tmp_path, {"data.py": """
        from torch.utils.data import DataLoader

        def load_data(dataset, workers):
            return DataLoader(dataset, batch_size=2, num_workers=workers)

        def read_all(dataset):
            return list(DataLoader(dataset, batch_size=2, num_workers=2))
    """, "train.py": """
        def train(net, train_iter, device):
            for X, y in train_iter:
                net(X.to(device), y.to(device)).backward()
    """})
    assert found(paths) == [("data.py", 5, "TL503")]
    assert found([p for p in paths if p.endswith("data.py")]) == []


def test_a_loader_returned_to_a_project_that_hands_loaders_to_lightning_is_not_pinned(tmp_path):
    paths = write(tmp_path, {"data.py": """
        from torch.utils.data import DataLoader

        def build_dataloader(dataset, batch_size=64, num_workers=0):
            return DataLoader(dataset, batch_size, num_workers=num_workers, persistent_workers=num_workers > 0)
    """, "train.py": """
        from lightning import pytorch as pl
        from data import build_dataloader

        def main(args, train_set, model):
            train_loader = build_dataloader(train_set, args.batch_size, args.num_workers)
            pl.Trainer(accelerator=args.accelerator).fit(model, train_loader)
    """})
    assert found(paths) == [("data.py", 5, "TL503")]
    assert found([p for p in paths if p.endswith("data.py")]) == []


def test_a_pinned_loader_passed_to_another_module_that_moves_blocking(tmp_path):
    paths = write(tmp_path, {"engine.py": ENGINE, "main.py": """
        from torch.utils.data import DataLoader
        import engine

        def main(dataset, model, optimizer, device, logger):
            loader = DataLoader(dataset, num_workers=4, pin_memory=True, persistent_workers=True)
            for epoch in range(10):
                engine.train_one_epoch(model, data_loader=loader, optimizer=optimizer, device=device,
                                       metric_logger=logger)
    """})
    assert found(paths) == [("engine.py", 6, "TL503")]


def test_a_pinned_loader_of_another_module_handed_to_a_function_that_moves_blocking(tmp_path):
    """train.py never names DataLoader: the loader comes from data.py's factory."""
    paths = write(tmp_path, {"data.py": """
        from torch.utils.data import DataLoader

        def make_valid_loader(dataset):
            return DataLoader(dataset, batch_size=32, num_workers=4, pin_memory=True)
    """, "train.py": """
        from data import make_valid_loader

        def validation(model, evaluation_loader, device):
            for images, labels in evaluation_loader:
                model(images.to(device))

        def train(model, dataset, device):
            valid_loader = make_valid_loader(dataset)
            for step in range(100):
                validation(model, valid_loader, device)
    """})
    assert found(paths) == [("train.py", 6, "TL503")]


def test_a_helper_called_only_from_cold_code_stays_silent(tmp_path):
    paths = write(tmp_path, {
        "evaluate.py": """
            from ops import unused

            def report(dist):
                print(unused(dist))
        """,
        "ops.py": HELPER,
    })
    assert found(paths) == []


def test_a_metric_compute_its_base_forward_calls_stays_cold_with_what_it_calls(tmp_path):
    paths = write(tmp_path, {
        "metrics/__init__.py": "",
        "metrics/base.py": """
            import torch

            class Metric(torch.nn.Module):
                def forward(self, preds, target):
                    self.update(preds, target)
                    return self.compute()
        """,
        "metrics/functional.py": """
            import torch

            def pearson_compute(cov, var):
                if (var < 1e-8).any():  # once per epoch
                    print("variance too small")
                return cov / var.sqrt()

            def pearson_update(preds, target):
                if (preds.isnan()).any():  # on every batch
                    raise ValueError("nan")
                return (preds * target).sum(), (preds * preds).sum()
        """,
        "metrics/pearson.py": """
            import torch
            from .base import Metric
            from .functional import pearson_compute, pearson_update

            class Pearson(Metric):
                def update(self, preds, target):
                    cov, var = pearson_update(preds, target)
                    self.cov += cov
                    self.var += var

                def compute(self):
                    return pearson_compute(self.cov, self.var)
        """,
    })
    assert found(paths) == [("functional.py", 10, "TL201")]


def test_a_one_line_helper_of_another_module_returns_a_tensor_where_its_arguments_are(tmp_path):
    paths = write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/utils/__init__.py": "from .labels import contains_known, is_known, label_names",
        "pkg/utils/labels.py": """
            import torch

            def is_known(labels):
                \"\"\"Where the labels are in-distribution.\"\"\"
                return labels >= 0

            def contains_known(labels):
                return is_known(labels).any()

            def label_names(labels):
                return [str(label) for label in labels]
        """,
        "pkg/loss.py": """
            import torch
            from torch import nn
            import torch.nn.functional as F
            from .utils import contains_known, is_known, label_names

            class OpenSetLoss(nn.Module):
                def forward(self, logits, target):
                    if not contains_known(target):  # a 0-d tensor on the device
                        return logits.sum() * 0.0
                    if label_names(target):  # a list
                        pass
                    known = is_known(target)
                    return F.cross_entropy(logits[known], target[known])
        """,
    })
    assert found(paths) == [("loss.py", 9, "TL201")]


TRAINER = """
    class Trainer:
        def __init__(self, model):
            self.model = model

        def predict(self, batch):
            self.model.eval()
            return self.model(batch).argmax(-1).tolist()

        def update(self, batch):
            self.model.train()
            loss = self.model(batch).mean()
            loss.backward()
            return loss.item()
"""


def test_a_loop_calling_another_modules_method_that_runs_the_model_in_eval_mode_evaluates(tmp_path):
    paths = write(tmp_path, {"pkg/__init__.py": "", "pkg/trainer.py": TRAINER, "pkg/run.py": """
        import torch
        from pkg.trainer import Trainer

        def train(model, train_batches, dev_batches):
            trainer = Trainer(model)
            for batch in train_batches:
                trainer.update(batch)
                predictions = []
                for batch in dev_batches:
                    predictions += trainer.predict(batch)
            with torch.no_grad():
                for batch in dev_batches:
                    trainer.predict(batch)
            for batch in dev_batches:
                trainer.update(batch)
    """})
    assert found(paths) == [("run.py", 10, "TL701")]
    assert found([p for p in paths if p.endswith("run.py")]) == []


def test_a_method_that_runs_the_model_under_no_grad_tells_nothing(tmp_path):
    paths = write(tmp_path, {"pkg/__init__.py": "", "pkg/trainer.py": """
        import torch

        class Trainer:
            def __init__(self, model):
                self.model = model

            def predict(self, batch):
                self.model.eval()
                with torch.no_grad():
                    return self.model(batch).argmax(-1).tolist()
    """, "pkg/run.py": """
        import torch
        from pkg.trainer import Trainer

        def evaluate(model, batches):
            trainer = Trainer(model)
            for batch in batches:
                trainer.predict(batch)
    """})
    assert found(paths) == []


def test_fix_mode_reports_what_other_files_make_hot(package):
    assert found(package, mode=FIX) == [("ops.py", 6, "TL201"), ("ops.py", 6, "TL202")]


def test_module_names(tmp_path):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/sub/__init__.py": "", "pkg/sub/mod.py": "", "script.py": ""})
    assert module_name(str(tmp_path / "pkg" / "sub" / "mod.py")) == "pkg.sub.mod"
    assert module_name(str(tmp_path / "pkg" / "sub" / "__init__.py")) == "pkg.sub"
    assert module_name(str(tmp_path / "script.py")) == "script"
    assert module_name(str(tmp_path / "notebook.ipynb")) == ""


DATASETS = """
    import torch
    from torch.utils.data import Dataset


    class Rows(Dataset):
        def __init__(self, x):
            self.x = x

        def __getitem__(self, i):
            return torch.from_numpy(self.x[i]).float()


    class Images(Dataset):
        def __getitem__(self, i):
            return read_image(self.paths[i])
"""
PREDICT = """
    from torch.utils.data import DataLoader

    from {module} import Images, Rows


    def predict(x):
        return DataLoader(Rows(x), batch_size=64), DataLoader(Images(), batch_size=64)
"""


def test_a_dataset_class_of_another_module_that_only_indexes_memory_needs_no_workers(tmp_path):
    paths = write(tmp_path, {"pkg/__init__.py": "", "pkg/data.py": DATASETS,
                             "pkg/predict.py": PREDICT.format(module="pkg.data")})
    assert found(paths) == [("predict.py", 8, "TL501")]  # Images reads files; Rows only indexes
    assert found([p for p in paths if p.endswith("predict.py")]) == [("predict.py", 8, "TL501")] * 2


PARALLEL = """
    from torch.nn import DataParallel


    class BalancedDataParallel(DataParallel):
        def __init__(self, gpu0_bsz, *args, **kwargs):
            self.gpu0_bsz = gpu0_bsz
            super().__init__(*args, **kwargs)
"""
WRAP = """
    from pkg.parallel import BalancedDataParallel
    from pkg.other import SequenceParallel


    def wrap(model):
        return BalancedDataParallel(2, model, dim=0).cuda(), SequenceParallel(model)
"""


def test_a_data_parallel_subclass_of_another_module_is_data_parallel(tmp_path):
    paths = write(tmp_path, {"pkg/__init__.py": "", "pkg/parallel.py": PARALLEL, "pkg/wrap.py": WRAP,
                             "pkg/other.py": "class SequenceParallel:\n    pass\n"})
    assert found(paths) == [("wrap.py", 7, "TL401")]
    assert found([p for p in paths if p.endswith("wrap.py")]) == []  # alone it cannot know


ATOMS_LOADER = """
    from torch.utils.data import DataLoader

    __all__ = ["AtomsLoader"]


    class AtomsLoader(DataLoader):
        def __init__(self, dataset, batch_size=1, num_workers=0, **kwargs):
            super().__init__(dataset, batch_size=batch_size, num_workers=num_workers, collate_fn=collate, **kwargs)
"""
DATA_MODULE = """
    import pytorch_lightning as pl

    from pkg.data import AtomsLoader


    class AtomsDataModule(pl.LightningDataModule):
        def train_dataloader(self):
            if self._train_dataloader is None:
                self._train_dataloader = AtomsLoader(self.train_set, batch_size=32, num_workers=self.workers)
            return self._train_dataloader

        def test_dataloader(self):
            if self._test_dataloader is None:  # trainer.test walks it once
                self._test_dataloader = AtomsLoader(self.test_set, batch_size=32, num_workers=self.workers)
            return self._test_dataloader
"""


def test_a_loader_subclass_a_package_star_imports_is_a_loader(tmp_path):
    paths = write(tmp_path, {"pkg/__init__.py": "", "pkg/data/__init__.py": "from .loader import *\nfrom .module import *\n",
                             "pkg/data/loader.py": ATOMS_LOADER, "pkg/data/module.py": DATA_MODULE})
    assert found(paths) == [("module.py", 10, "TL502")]
    assert found([p for p in paths if not p.endswith("loader.py")]) == []  # alone it cannot know


TO_TENSOR = """
    import torch


    def to_tensor(array, device):
        return torch.from_numpy(array).to(device)


    def wrap(array):
        return torch.from_numpy(array)
"""
PREDICT_IMAGE = """
    import numpy as np
    from pkg.convert import to_tensor, wrap


    def predict(net, img, device):
        img = img.transpose(2, 0, 1)
        return net(to_tensor(img, device=device)), wrap(np.ascontiguousarray(img))
"""


def test_a_permuted_array_passed_to_a_function_of_another_module_reaches_its_from_numpy(tmp_path):
    paths = write(tmp_path, {"pkg/__init__.py": "", "pkg/convert.py": TO_TENSOR, "pkg/predict.py": PREDICT_IMAGE})
    outcomes = run(paths, Settings(preview=True), Options(CHECK))
    found_there = [(o.path.rsplit("/", 1)[-1], d.line) for o in outcomes for d in o.diagnostics if d.code == "TL302"]
    assert found_there == [("convert.py", 6)]  # passed by keyword; wrap is given a contiguous copy


IMAGE_UTILS = """
    def hwc_to_chw(img):
        return img.transpose(2, 0, 1)


    def bgr_to_rgb(img):
        return img[..., ::-1]


    def resized(img, size):
        return img[:size, :size]
"""
LOAD_IMAGE = """
    import torch
    from pkg import image_utils
    from pkg.image_utils import bgr_to_rgb, hwc_to_chw


    def load(img):
        return torch.from_numpy(hwc_to_chw(img)), torch.from_numpy(image_utils.hwc_to_chw(img))


    def load_rgb(img):
        return torch.from_numpy(bgr_to_rgb(img).transpose(2, 0, 1)), torch.from_numpy(image_utils.resized(img, 8))
"""


def test_an_array_a_function_of_another_module_returns_permuted_or_reversed(tmp_path):
    paths = write(tmp_path, {"pkg/__init__.py": "", "pkg/image_utils.py": IMAGE_UTILS, "pkg/load.py": LOAD_IMAGE})
    outcomes = run(paths, Settings(preview=True), Options(CHECK))
    found_there = sorted((d.line, d.column, d.code) for o in outcomes for d in o.diagnostics if d.code in ("TL301", "TL302"))
    assert found_there == [(8, 12, "TL302"), (8, 47, "TL302"), (12, 12, "TL301")]
    alone = run([p for p in paths if p.endswith("load.py")], Settings(preview=True), Options(CHECK))
    alone_found = [(d.line, d.code) for o in alone for d in o.diagnostics if d.code in ("TL301", "TL302")]
    assert alone_found == [(12, "TL302")]  # only the transpose it sees


def test_a_class_a_package_re_exports_is_known_by_both_names(tmp_path):
    paths = write(tmp_path, {"pkg/__init__.py": "from .data import Images, Rows\n", "pkg/data.py": DATASETS,
                             "pkg/predict.py": PREDICT.format(module="pkg")})
    assert found(paths) == [("predict.py", 8, "TL501")]


def test_a_helper_re_exported_by_its_package_is_hot_when_a_loss_calls_it(tmp_path):
    loss = LOSS.replace("from .ops import hardest", "from pkg.losses import hardest")
    paths = write(tmp_path, {"pkg/__init__.py": "", "pkg/losses/__init__.py": "from .ops import hardest\n",
                             "pkg/losses/ops.py": HELPER, "pkg/losses/triplet.py": loss})
    assert found(paths) == [("ops.py", 6, "TL201"), ("ops.py", 6, "TL202")]


def test_modules_in_folders_without_init_match_by_their_end(tmp_path):
    """``from pkg.data import Rows`` reaches ``pkg/data.py`` even without ``pkg/__init__.py``."""
    paths = write(tmp_path, {"pkg/data.py": DATASETS, "pkg/predict.py": PREDICT.format(module="pkg.data")})
    assert found(paths) == [("predict.py", 8, "TL501")]


FACTORIES = """
    import os
    from torch.utils.data import DataLoader

    from pkg.infinite import InfiniteDataLoader

    PIN_MEMORY = os.getenv("PIN_MEMORY", "1") == "1"


    def create_dataloader(path, batch_size, workers=8, weighted=False):
        dataset = Images(path)
        loader = DataLoader if weighted else InfiniteDataLoader
        return loader(dataset, batch_size=batch_size, num_workers=workers, pin_memory=PIN_MEMORY), dataset


    def create_plain_loader(path, batch_size):
        return DataLoader(Images(path), batch_size=batch_size, num_workers=4)
"""
INFINITE = """
    from torch.utils.data import dataloader


    class InfiniteDataLoader(dataloader.DataLoader):
        pass
"""
TRAIN_WITH_FACTORIES = """
    import torch
    from tqdm import tqdm

    from pkg.factories import create_dataloader, create_plain_loader

    device = torch.device("cuda")


    def train(model, optimizer, criterion, epochs):
        train_loader, dataset = create_dataloader("data", 16)
        plain = create_plain_loader("data", 16)
        for epoch in range(epochs):
            pbar = enumerate(train_loader)
            pbar = tqdm(pbar, total=len(train_loader))
            for i, (imgs, targets) in pbar:
                imgs = imgs.to(device, non_blocking=True).float() / 255
                criterion(model(imgs), targets.to(device)).backward()
                optimizer.step()
            for x, y in plain:
                criterion(model(x.to(device)), y.to(device)).backward()
                optimizer.step()
"""


def test_loaders_returned_by_functions_of_other_modules(tmp_path):
    """YOLOv5's layout: ``create_dataloader`` returns a pinned loader of a DataLoader subclass
    defined in a third module; an unpinned one is reported where it is built."""
    paths = write(tmp_path, {"pkg/__init__.py": "", "pkg/infinite.py": INFINITE, "pkg/factories.py": FACTORIES,
                             "pkg/train.py": TRAIN_WITH_FACTORIES})
    assert found(paths) == [("factories.py", 17, "TL503"), ("train.py", 18, "TL503")]
    assert found(paths, jobs=2) == found(paths)
    alone = [p for p in paths if p.endswith("train.py")]
    assert found(alone) == []


class _AsksAhead(Rule):
    """A rule that resolves every call of a function before the walk reaches it."""

    code = "TL999"
    triggers = ("def",)

    def visit_FunctionDef(self, node):
        for call in descendants(node):
            if isinstance(call, cst.Call):
                self.ctx.qualname(call.func)


def test_a_name_a_rule_resolved_ahead_of_a_local_import_still_reaches_its_module():
    text = textwrap.dedent("""
        from torch import nn

        class Decoder(nn.Module):
            def forward(self, feats, targets):
                from pkg.ops import denoising_group
                return feats * denoising_group(targets)
    """)
    result = lint_text(text, "pkg/head.py", [_AsksAhead])
    assert ("pkg.ops.denoising_group", "model") in result.project.hot_calls


METRIC = """
    import torch

    class CategoricalAccuracy:
        def __call__(self, predictions: torch.Tensor, gold: torch.Tensor):
            self.correct += (predictions.argmax(-1) == gold).sum().item()
"""
CLASSIFIER = """
    from torch import nn

    from pkg.metrics import CategoricalAccuracy


    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.accuracy = CategoricalAccuracy()

        def forward(self, x, label):
            logits = self.linear(x)
            {call}
            return logits
"""


@pytest.mark.parametrize("call, expected", [
    ("self.accuracy(logits, label)", [("metrics.py", 6, "TL201")]),
    ("if not self.training: self.accuracy(logits, label)", []),  # statistics of evaluation only
])
def test_an_object_the_model_holds_is_called_per_forward(tmp_path, call, expected):
    paths = write(tmp_path, {"pkg/__init__.py": "", "pkg/metrics.py": METRIC,
                             "pkg/model.py": CLASSIFIER.format(call=call)})
    assert found(paths) == expected


TIMERS = """
    import time
    from contextlib import contextmanager


    @contextmanager
    def timed(name, log):
        start = time.perf_counter()
        try:
            yield
        finally:
            log[name] = time.perf_counter() - start


    class Stopwatch:
        def __enter__(self):
            self.start = time.time()
            return self

        def __exit__(self, *exc):
            self.elapsed = time.time() - self.start


    class Reporter:
        @contextmanager
        def measure_time(self, name):
            start = time.perf_counter()
            yield start
            self.stats[name] = time.perf_counter() - start

        @contextmanager
        def section(self, name):
            yield name
"""
TIMED_STEP = """
    from pkg.timers import Stopwatch, timed


    def step(model, x, optimizer, reporter, log):
        with timed("forward", log):
            loss = model(x.cuda()).sum()
        with reporter.measure_time("backward"):
            loss.backward()
        with Stopwatch(), reporter.section("step"):
            optimizer.step()
        with timed("read", log):
            return loss.item()
"""


def test_a_timing_context_manager_of_another_module_closes_its_interval_at_the_end_of_the_block(tmp_path):
    paths = write(tmp_path, {"pkg/__init__.py": "", "pkg/timers.py": TIMERS, "pkg/train.py": TIMED_STEP})
    assert found(paths) == [("train.py", 6, "TL601"), ("train.py", 8, "TL601"), ("train.py", 10, "TL601")]
    assert found([p for p in paths if p.endswith("train.py")]) == []  # alone it cannot know


NOISE = """
    import torch


    def sample_noise(batch, nz):
        return torch.randn(batch, nz, 1, 1)


    def causal_mask(n):
        return torch.triu(torch.full((n, n), float("-inf")), diagonal=1)


    def ones_on(n, device):
        return torch.ones(n, device=device)
"""
GAN_STEP = """
    import torch

    from pkg.noise import causal_mask, ones_on, sample_noise


    def step(generator, batch, nz, device, src):
        z = sample_noise(batch, nz).to(device)
        mask = causal_mask(src.size(0)).type_as(src)
        return generator(z), mask, ones_on(batch, device)
"""


def test_a_factory_returned_by_a_function_of_another_module_and_moved_by_its_caller(tmp_path):
    paths = write(tmp_path, {"pkg/__init__.py": "", "pkg/noise.py": NOISE, "pkg/gan.py": GAN_STEP})
    assert found(paths) == [("noise.py", 6, "TL101"), ("noise.py", 10, "TL101")]
    assert found([p for p in paths if p.endswith("noise.py")]) == []  # alone it cannot know


STOPWATCH = """
    import time


    class Stopwatch:
        def __init__(self):
            self.start = time.perf_counter()

        def reset(self):
            self.start = time.perf_counter()

        def seconds(self):
            return time.perf_counter() - self.start
"""
TIMED_EVAL = """
    from pkg.stopwatch import Stopwatch


    def evaluate(model, images):
        watch = Stopwatch()
        outputs = model(images.cuda())
        elapsed = watch.seconds()
        watch.reset()
        host = outputs.cpu()
        return host, elapsed, watch.seconds()
"""


def test_a_stopwatch_class_of_another_module_stops_its_interval_at_its_stop_method(tmp_path):
    paths = write(tmp_path, {"pkg/__init__.py": "", "pkg/stopwatch.py": STOPWATCH, "pkg/evaluate.py": TIMED_EVAL})
    assert found(paths) == [("evaluate.py", 8, "TL601")]
    assert found([p for p in paths if p.endswith("evaluate.py")]) == []  # alone it cannot know


PIX2PIX = """
    class Pix2Pix:
        def __init__(self, device):
            self.device = device

        def set_input(self, data):
            self.real_a = data["A"].to(self.device)
"""
PIX2PIX_TRAIN = """
    import torch
    from torch.utils.data import DataLoader

    from pkg.model import Pix2Pix


    def train(dataset, epochs):
        loader = DataLoader(dataset, batch_size=1, shuffle=True, num_workers=4)
        model = Pix2Pix(torch.device("cuda"))
        for epoch in range(epochs):
            for data in loader:
                model.set_input(data)
                model.log(data)
"""


def test_a_batch_handed_to_a_method_of_another_module_that_moves_it(tmp_path):
    paths = write(tmp_path, {"pkg/__init__.py": "", "pkg/model.py": PIX2PIX, "pkg/train.py": PIX2PIX_TRAIN})
    assert [finding for finding in found(paths) if finding[2] == "TL503"] == [("train.py", 9, "TL503")]
    assert [f for f in found([p for p in paths if p.endswith("train.py")]) if f[2] == "TL503"] == []


STEPPING_TRAINER = """
    class Trainer:
        def update(self, batch):
            loss = self.model(batch.to(self.device))
            value = loss.item()
            loss.backward()
            self.optimizer.step()
            return value

        def fit(self, loader):
            for batch in loader:
                self.model(batch).backward()
"""
TIMED_UPDATES = """
    import time


    def train(trainer, batches, log):
        for batch in batches:
            start = time.time()
            loss = trainer.update(batch)
            log(loss, time.time() - start)
        begin = time.time()
        trainer.fit(batches)
        log(time.time() - begin)
"""


def test_a_method_of_another_module_that_steps_without_waiting_is_gpu_work_for_a_timer(tmp_path):
    paths = write(tmp_path, {"pkg/__init__.py": "", "pkg/trainer.py": STEPPING_TRAINER, "pkg/train.py": TIMED_UPDATES})
    assert found(paths) == [("train.py", 9, "TL601")]
    assert found([p for p in paths if p.endswith("train.py")]) == []  # alone it cannot know


def test_a_function_of_another_module_that_empties_the_cache_is_reported_where_a_loop_calls_it(tmp_path):
    paths = write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/helpers.py": """
            import torch


            def empty_cache(device):
                if device.type == "cuda":
                    torch.cuda.empty_cache()


            def load(path):
                return torch.load(path)
        """,
        "pkg/predict.py": """
            import torch
            from pkg.helpers import empty_cache, load


            class Predictor:
                def predict_cases(self, cases):
                    for case in cases:
                        out = self.network(load(case).to(self.device))
                        torch.save(out.cpu(), case + ".out")
                        empty_cache(self.device)

                def finish(self):
                    empty_cache(self.device)  # once
        """,
    })
    assert [f for f in found(paths) if f[2] == "TL204"] == [("predict.py", 11, "TL204")]
    assert [f for f in found([paths[2]]) if f[2] == "TL204"] == []  # alone, the caller cannot know what the helper does

