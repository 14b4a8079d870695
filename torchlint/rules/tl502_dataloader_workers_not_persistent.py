"""TL502 dataloader-workers-not-persistent: worker processes started anew every epoch."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from torchlint.context.keywords import keywords, spread_changed
from torchlint.context.loaders import (
    DATALOADER, DATASET_POSITION, EPOCH_NAME, LOADER_TRIGGERS, NUM_WORKERS_POSITION, SHUFFLE_POSITION, Ref, argument, dataloader_call,
    cycled, fitted, returned_by_epoch_hook, unwrap_iteration,
)
from torchlint.context.scopes import in_loop, method_def
from torchlint.rewrite import Replacement, code_in_block, with_keyword
from torchlint.rules.base import Invalid, Rule, Valid
from torchlint.syntax import assigned_name, dotted_name, is_name, keyword, literal_value
from torchlint.walker import descendants, simple_statements

# Lightning hooks whose loader the trainer walks once (`trainer.test`, `trainer.predict`).
_ONE_PASS_HOOKS = frozenset({"test_dataloader", "predict_dataloader"})


class DataloaderWorkersNotPersistent(Rule):
    code = "TL502"
    name = "dataloader-workers-not-persistent"
    message = (
        "DataLoader starts its worker processes anew for every epoch; pass `persistent_workers=True` "
        "to keep them alive between epochs"
    )
    fix = "unsafe"
    triggers = LOADER_TRIGGERS
    what = (
        "Finds `torch.utils.data.DataLoader(...)` with worker processes (`num_workers` a literal "
        "above 0, or a variable) and no `persistent_workers` argument, when the loader is iterated "
        "more than once: it is named inside the body of a loop (an epoch loop) after being built in "
        "the same function (passed to `train(loader)` or iterated again; `len(loader)` inside the "
        "loop that iterates it is still one pass), kept on `self` (not in a Lightning `test_dataloader` or "
        "`predict_dataloader` hook: those loaders are walked once), returned by a Lightning "
        "`train_dataloader` / `val_dataloader` hook (also through the name it is assigned to), which Lightning iterates every epoch, a shuffled "
        "`DataLoader` or one with a sampler of its own (a training loader) that its function returns "
        "for the caller to train on, any loader returned to a caller that keeps it on `self` "
        "(`self.evalloaders.append(self._eval_loader(ds))`), or an evaluation loader returned beside one (`return train_iter, "
        "test_iter`, also in a list or dict, `return {\"train\": train, \"val\": val}`: the loop that "
        "trains on one evaluates on the other every epoch), not one built "
        "for a given epoch (`build_iter(self, epoch)`) nor one whose sampler, a class of the file, never ends "
        "(`while True:` in its `__iter__`, detectron2's `TrainingSampler`: iterated once for the whole run); handed to a generator of the file that walks "
        "it again and again (`self.dl = cycle(dl)` with `while True: for x in dl: yield x`, also "
        "through `accelerator.prepare(dl)`, or `model, dl = accelerator.prepare(model, dl)`; not `itertools.cycle`, which replays one pass); given to "
        "Lightning's `trainer.fit(model, train_loader, val_loader)`, which iterates both every epoch; or "
        "iterated by a function of the same file that is called from a loop (a loader built at "
        "module level, or in `main()` and passed along, and iterated by `train(epoch)`; also one "
        "given to a class of the file, `Trainer(model, loader)`, kept on `self` and iterated by a "
        "method its `fit` calls every epoch). The same "
        "file is followed through module-level names, parameters at call sites, `self` attributes, "
        "functions returning a loader, dicts, lists and tuples of loaders (`loaders[phase]` of "
        "`{phase: DataLoader(...) for phase in phases}`, `loaders[\"train\"]` of a dict display), "
        "and `**loader_kwargs` dicts built in the same function. DataLoader subclasses count too, also "
        "those of other modules of the run (`AtomsLoader(...)`, imported through a package's "
        "`from .loader import *`)."
    )
    why = (
        "Without `persistent_workers`, each `iter(loader)` (every epoch, every validation pass) "
        "starts `num_workers` new processes and shuts them down when the pass ends. Each start "
        "pays the process creation, and all the per-worker set-up the dataset does lazily (opening "
        "files, LMDB/HDF5 handles, tokenizers); with the `spawn` or `forkserver` start methods it "
        "also starts an interpreter, imports torch and unpickles the dataset in every worker. The "
        "training step waits for that at the start of every epoch."
    )
    example = Invalid("""
        from torch.utils.data import DataLoader

        loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=8)  # expect: TL502
        for epoch in range(10):
            for batch in loader:
                step(batch)
    """)
    use_instead = Valid("""
        from torch.utils.data import DataLoader

        loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=8,
                            persistent_workers=True)
        for epoch in range(10):
            for batch in loader:
                step(batch)
    """)
    fix_safety = (
        "Unsafe: the workers keep the copy of the dataset they were started with, so changes the "
        "main process makes to the dataset between epochs (a curriculum, a resampled subset, a "
        "`set_epoch` on the dataset) no longer reach them; the worker processes and their memory "
        "also stay alive while the loader exists. The fix adds `persistent_workers=True`, or "
        "`persistent_workers=<num_workers> > 0` when the worker count is a variable, because "
        "`DataLoader` rejects persistent workers when `num_workers` is 0; no fix when the workers "
        "come from a `**kwargs` dict changed after it was built (`if use_cuda: kwargs.update("
        "num_workers=1)`: on the other path the same keyword would meet no workers), nor when the "
        "call also passes a `**kwargs` it cannot see (`**self.config.loader_kwargs`: added beside "
        "it, the keyword could be given twice), though the workers it shows are still reported. "
        "Not reported when the call passes `*args`, gives `persistent_workers` in any form (also through its `**kwargs` dict, `args[\"persistent_workers\"] = ...`), or is built inside "
        "a loop (a loader made anew every epoch gains nothing: build it once), when nothing shows the "
        "loader is iterated twice (a one-shot evaluation loader, `test_dataloader`), when the code "
        "changes the dataset between epochs (`ds.set_epoch(epoch)` or `ds.level = k` in the epoch "
        "loop, or, for a dataset kept on `self`, in a method other than `__init__`/`setup`), which "
        "persistent workers would not see, or in test code."
    )
    valid = (
        Valid("""
            import pytorch_lightning as pl
            from torch.utils.data import DataLoader

            class DataModule(pl.LightningDataModule):
                def test_dataloader(self):
                    self._test = DataLoader(self.test_set, batch_size=32, num_workers=4)  # trainer.test walks it once
                    return self._test
        """),
        Valid("""
            import torch
            from torch.utils.data import DataLoader, Sampler

            class TrainingSampler(Sampler):
                def __init__(self, size):
                    self.size = size

                def __iter__(self):
                    while True:  # endless: the loader is iterated once, for the whole run
                        yield from torch.randperm(self.size).tolist()

            def build_train_loader(dataset, workers):
                return DataLoader(dataset, batch_size=16, sampler=TrainingSampler(len(dataset)), num_workers=workers)
        """),
        Valid("""
            from torch.utils.data import DataLoader

            def evaluate(model, loader):
                return sum(model(x).sum().item() for x in loader)

            def main(model, train_set, val_set, test_set, epochs):
                val_loader = DataLoader(val_set, num_workers=8, persistent_workers=True)
                test_loader = DataLoader(test_set, num_workers=8)  # one pass, after training
                for epoch in range(epochs):
                    print(epoch, evaluate(model, val_loader))
                print("test", evaluate(model, test_loader))
        """),
        Valid("""
            import torch

            def build_dataloader(dataset, opt):
                args = dict(dataset=dataset, batch_size=4, shuffle=True, num_workers=4)
                args["persistent_workers"] = opt.get("persistent_workers", False)  # the user's choice
                return torch.utils.data.DataLoader(**args)
        """),
        Valid("""
            from torch.utils.data import DataLoader

            def main(model, dataset, trainer):
                trainer.test(model, DataLoader(dataset, batch_size=64, num_workers=8))  # one pass
        """),
        Valid("""
            import itertools
            from torch.utils.data import DataLoader

            class Trainer:
                def __init__(self, ds):
                    dl = DataLoader(ds, batch_size=32, shuffle=True, num_workers=8)
                    self.dl = itertools.cycle(dl)  # replays the batches of one pass: the loader runs once
        """),
        Valid("""
            from torch.utils.data import DataLoader

            class SequenceIterFactory:
                def build_iter(self, epoch, shuffle=None):
                    batches = self.sampler.generate(epoch + self.seed)
                    return DataLoader(self.dataset, batch_sampler=batches, num_workers=self.num_workers)
        """),  # built anew for each epoch: nothing to keep alive
        Valid("""
            from torch.utils.data import DataLoader
            def make_loaders(train_set, test_set, workers):
                test_loader = DataLoader(test_set, num_workers=workers)  # not shuffled: evaluated once
                return test_loader
        """),
        Valid("""
            from torch.utils.data import DataLoader
            class InfiniteDataLoader(DataLoader):  # reuses its workers: iterates one endless sampler
                pass
            def build(ds, workers):
                return InfiniteDataLoader(ds, shuffle=True, num_workers=workers)
        """),
        Valid("""
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=4, persistent_workers=True)
            for epoch in range(3):
                for batch in loader:
                    step(batch)
        """),
        Valid("""
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=n, persistent_workers=n > 0)
            for epoch in range(3):
                train(loader)
        """),
        Valid("""
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=0)
            for epoch in range(3):
                train(loader)
        """),
        Valid("""
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, *loader_args, num_workers=4)  # *args it cannot see may hold anything
            for epoch in range(3):
                train(loader)
        """),
        Valid("""
            from torch.utils.data import DataLoader

            def score(ds):
                loader = DataLoader(ds, num_workers=4)
                for batch in loader:
                    update(batch)
        """),
        Valid("""
            from torch.utils.data import DataLoader
            for epoch in range(10):
                for batch in DataLoader(subset(epoch), num_workers=4):
                    step(batch)
        """),
        Valid("""
            from torch.utils.data import DataLoader

            class Data:
                def test_dataloader(self):
                    return DataLoader(self.test_set, num_workers=4)
        """),
        Valid("""
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=4)
            for epoch in range(3):
                ds.set_epoch(epoch)
                for batch in loader:
                    step(batch)
        """),
        Valid("""
            from torch.utils.data import DataLoader

            class Data:
                def train_dataloader(self):
                    return DataLoader(self.train_set, num_workers=8)

                def on_train_epoch_start(self):
                    self.train_set.difficulty += 1
        """),
    )
    invalid = (
        Invalid("""
            import pytorch_lightning as pl
            from torch.utils.data import DataLoader

            class DataModuleFromConfig(pl.LightningDataModule):
                def __init__(self, batch_size, num_workers, validation=None):
                    super().__init__()
                    self.batch_size, self.num_workers = batch_size, num_workers
                    if validation is not None:
                        self.val_dataloader = self._val_dataloader  # the hook, bound in __init__

                def _val_dataloader(self):
                    return DataLoader(self.datasets["validation"], batch_size=self.batch_size, num_workers=self.num_workers)  # expect: TL502
        """, fixed="""
            import pytorch_lightning as pl
            from torch.utils.data import DataLoader

            class DataModuleFromConfig(pl.LightningDataModule):
                def __init__(self, batch_size, num_workers, validation=None):
                    super().__init__()
                    self.batch_size, self.num_workers = batch_size, num_workers
                    if validation is not None:
                        self.val_dataloader = self._val_dataloader  # the hook, bound in __init__

                def _val_dataloader(self):
                    return DataLoader(self.datasets["validation"], batch_size=self.batch_size, num_workers=self.num_workers, persistent_workers=self.num_workers > 0)
        """),
        Invalid("""
            import torch

            class Trainer:
                def __init__(self, args, eval_sets):
                    self.evalloaders = []
                    for dataset in eval_sets:
                        self.evalloaders.append(self._eval_loader(dataset, args))  # kept to evaluate every epoch

                def _eval_loader(self, dataset, args):
                    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, num_workers=4)  # expect: TL502
                    return loader
        """, fixed="""
            import torch

            class Trainer:
                def __init__(self, args, eval_sets):
                    self.evalloaders = []
                    for dataset in eval_sets:
                        self.evalloaders.append(self._eval_loader(dataset, args))  # kept to evaluate every epoch

                def _eval_loader(self, dataset, args):
                    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, num_workers=4, persistent_workers=True)
                    return loader
        """),
        Invalid("""
            from torch.utils.data import DataLoader

            def build_loaders(train_set, val_set):
                train = DataLoader(train_set, shuffle=True, num_workers=8)  # expect: TL502
                val = DataLoader(val_set, num_workers=8)  # expect: TL502
                return {"train": train, "val": val}
        """, fixed="""
            from torch.utils.data import DataLoader

            def build_loaders(train_set, val_set):
                train = DataLoader(train_set, shuffle=True, num_workers=8, persistent_workers=True)
                val = DataLoader(val_set, num_workers=8, persistent_workers=True)
                return {"train": train, "val": val}
        """),
        Invalid("""
            from torch.utils.data import DataLoader

            class Trainer:
                def __init__(self, model, loader):
                    self.model, self.loader = model, loader

                def train_epoch(self):
                    for x, y in self.loader:
                        self.model(x.cuda()).sum().backward()

                def fit(self, epochs):
                    for epoch in range(epochs):
                        self.train_epoch()

            def main(dataset, model):
                loader = DataLoader(dataset, batch_size=64, num_workers=8)  # expect: TL502
                Trainer(model, loader).fit(90)
        """, fixed="""
            from torch.utils.data import DataLoader

            class Trainer:
                def __init__(self, model, loader):
                    self.model, self.loader = model, loader

                def train_epoch(self):
                    for x, y in self.loader:
                        self.model(x.cuda()).sum().backward()

                def fit(self, epochs):
                    for epoch in range(epochs):
                        self.train_epoch()

            def main(dataset, model):
                loader = DataLoader(dataset, batch_size=64, num_workers=8, persistent_workers=True)
                Trainer(model, loader).fit(90)
        """),
        Invalid("""
            from torch.utils.data import DataLoader

            def train_model(model, datasets, optimizer, device, epochs):
                loaders = {phase: DataLoader(datasets[phase], batch_size=4, shuffle=True, num_workers=4)  # expect: TL502
                           for phase in ["train", "val"]}
                for epoch in range(epochs):
                    for phase in ["train", "val"]:
                        for inputs, labels in loaders[phase]:  # a loader of the dict, every epoch
                            loss = model(inputs.to(device), labels.to(device))
                            if phase == "train":
                                loss.backward()
                                optimizer.step()
        """, fixed="""
            from torch.utils.data import DataLoader

            def train_model(model, datasets, optimizer, device, epochs):
                loaders = {phase: DataLoader(datasets[phase], batch_size=4, shuffle=True, num_workers=4, persistent_workers=True)
                           for phase in ["train", "val"]}
                for epoch in range(epochs):
                    for phase in ["train", "val"]:
                        for inputs, labels in loaders[phase]:  # a loader of the dict, every epoch
                            loss = model(inputs.to(device), labels.to(device))
                            if phase == "train":
                                loss.backward()
                                optimizer.step()
        """),
        Invalid("""
            from torch.utils.data import DataLoader
            import pytorch_lightning as pl

            class TabularData(pl.LightningDataModule):
                def train_dataloader(self):
                    return DataLoader(  # expect: TL502
                        self.train_dataset,
                        batch_size=self.batch_size,
                        num_workers=self.config.num_workers,
                        **self.config.dataloader_kwargs,  # unseen: no fix, the keyword could come twice
                    )
        """),
        Invalid("""
            import pytorch_lightning as pl
            from torch.utils.data import DataLoader

            def main(model, dataset, workers):
                loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=workers)  # expect: TL502
                pl.Trainer(max_epochs=20).fit(model, loader)
        """, fixed="""
            import pytorch_lightning as pl
            from torch.utils.data import DataLoader

            def main(model, dataset, workers):
                loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=workers, persistent_workers=workers > 0)
                pl.Trainer(max_epochs=20).fit(model, loader)
        """),
        Invalid("""
            from torch.utils.data import DataLoader

            def cycle(dl):
                while True:
                    for batch in dl:
                        yield batch

            class Trainer:
                def __init__(self, ds, accelerator):
                    dl = DataLoader(ds, batch_size=32, shuffle=True, num_workers=8)  # expect: TL502
                    dl = accelerator.prepare(dl)
                    self.dl = cycle(dl)  # walked again and again, one pass of the loader after another
        """, fixed="""
            from torch.utils.data import DataLoader

            def cycle(dl):
                while True:
                    for batch in dl:
                        yield batch

            class Trainer:
                def __init__(self, ds, accelerator):
                    dl = DataLoader(ds, batch_size=32, shuffle=True, num_workers=8, persistent_workers=True)
                    dl = accelerator.prepare(dl)
                    self.dl = cycle(dl)  # walked again and again, one pass of the loader after another
        """),
        Invalid("""
            from torch.utils.data import DataLoader
            import pytorch_lightning as pl

            class Images(pl.LightningDataModule):
                def val_dataloader(self):
                    loader: DataLoader = DataLoader(self.val_set, batch_size=64, num_workers=8)  # expect: TL502
                    return loader
        """, fixed="""
            from torch.utils.data import DataLoader
            import pytorch_lightning as pl

            class Images(pl.LightningDataModule):
                def val_dataloader(self):
                    loader: DataLoader = DataLoader(self.val_set, batch_size=64, num_workers=8, persistent_workers=True)
                    return loader
        """),
        Invalid("""
            from torch.utils.data import DataLoader

            class Vits:
                def get_data_loader(self, config, dataset, sampler):
                    loader = DataLoader(  # expect: TL502
                        dataset, batch_sampler=sampler, num_workers=config.num_loader_workers
                    )
                    return loader
        """, fixed="""
            from torch.utils.data import DataLoader

            class Vits:
                def get_data_loader(self, config, dataset, sampler):
                    loader = DataLoader(
                        dataset, batch_sampler=sampler, num_workers=config.num_loader_workers, persistent_workers=config.num_loader_workers > 0
                    )
                    return loader
        """),
        Invalid("""
            from torch.utils.data import DataLoader
            def make_loaders(train_set, val_set, workers):
                train_loader = DataLoader(train_set, shuffle=True, num_workers=workers)  # expect: TL502
                val_loader = DataLoader(val_set, num_workers=workers)  # expect: TL502
                return train_loader, val_loader  # the loop that trains on one evaluates on the other
        """, fixed="""
            from torch.utils.data import DataLoader
            def make_loaders(train_set, val_set, workers):
                train_loader = DataLoader(train_set, shuffle=True, num_workers=workers, persistent_workers=workers > 0)
                val_loader = DataLoader(val_set, num_workers=workers, persistent_workers=workers > 0)
                return train_loader, val_loader  # the loop that trains on one evaluates on the other
        """),
        Invalid("""
            import torch
            from torch.utils.data import DataLoader

            def main(dataset, model):
                kwargs = {"batch_size": 64}
                if torch.cuda.is_available():
                    kwargs.update({"num_workers": 1, "pin_memory": True})
                loader = DataLoader(dataset, **kwargs)  # expect: TL502
                for epoch in range(10):
                    for batch in loader:
                        model(batch)
        """),
        Invalid("""
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=8, num_workers=4)  # expect: TL502
            for epoch in range(3):
                for batch in loader:
                    step(batch)
        """, fixed="""
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=8, num_workers=4, persistent_workers=True)
            for epoch in range(3):
                for batch in loader:
                    step(batch)
        """),
        Invalid("""
            import torch

            def main(args):
                loader = torch.utils.data.DataLoader(ds, num_workers=args.workers)  # expect: TL502
                for epoch in range(args.epochs):
                    train_one_epoch(model, loader)
        """, fixed="""
            import torch

            def main(args):
                loader = torch.utils.data.DataLoader(ds, num_workers=args.workers, persistent_workers=args.workers > 0)
                for epoch in range(args.epochs):
                    train_one_epoch(model, loader)
        """),
        Invalid("""
            from torch.utils.data import DataLoader

            class Data:
                def train_dataloader(self):
                    return DataLoader(  # expect: TL502
                        self.train_set,
                        num_workers=8,
                    )
        """, fixed="""
            from torch.utils.data import DataLoader

            class Data:
                def train_dataloader(self):
                    return DataLoader(
                        self.train_set,
                        num_workers=8,
                        persistent_workers=True,
                    )
        """),
        Invalid("""
            from torch.utils.data import DataLoader

            class Trainer:
                def __init__(self, ds):
                    self.loader = DataLoader(ds, num_workers=os.cpu_count() // 2)  # expect: TL502
        """),
        Invalid("""
            from torch.utils.data import DataLoader
            loader = DataLoader(  # expect: TL502
                ds, batch_size=8, num_workers=4
            )
            for epoch in range(3):
                for batch in loader:
                    step(batch)
        """, fixed="""
            from torch.utils.data import DataLoader
            loader = DataLoader(
                ds, batch_size=8, num_workers=4, persistent_workers=True
            )
            for epoch in range(3):
                for batch in loader:
                    step(batch)
        """),
        Invalid("""
            from torch.utils.data import DataLoader
            ds.download()
            loader = DataLoader(ds, num_workers=4)  # expect: TL502
            for epoch in range(3):
                for batch in loader:
                    step(batch)
        """, fixed="""
            from torch.utils.data import DataLoader
            ds.download()
            loader = DataLoader(ds, num_workers=4, persistent_workers=True)
            for epoch in range(3):
                for batch in loader:
                    step(batch)
        """),
    )

    def __init__(self, ctx, sink) -> None:
        super().__init__(ctx, sink)
        # (function, loader name) -> the loader call, built there and not yet seen iterated twice
        self._pending: Dict[Tuple[object, str], cst.Call] = {}
        self._reportable: Dict[int, tuple] = {}  # id(loader call) -> its fix, if it would be reported
        self._loops: List[Tuple[Ref, object, bool]] = []  # loops over loaders: (ref, function, nested)
        self._returned: List[Tuple[cst.Call, object]] = []  # loaders a function returns: (call, function)

    def visit_Call(self, node: cst.Call) -> None:
        visible = keywords(self.ctx, node, hidden_ok=True)  # workers shown beside a hidden **kwargs count
        if not dataloader_call(self.ctx, node, hidden_ok=True) or "persistent_workers" in visible:
            return
        if self.ctx.scope.kind == "loop" or self.ctx.is_test_module:
            return
        workers = argument(self.ctx, node, "num_workers", NUM_WORKERS_POSITION, hidden_ok=True)
        fix = self._fix(node, workers, self.ctx.indentation()) if workers is not None else None
        if fix is None:
            return
        if keywords(self.ctx, node) is None:
            fix = ()  # a `**kwargs` it cannot see may hold the keyword the fix would add
        parent = self.ctx.parent
        held = assigned_name(parent, node)
        holder = parent.targets[0].target if isinstance(parent, cst.Assign) and len(parent.targets) == 1 else None
        self_held = isinstance(holder, cst.Attribute) and dotted_name(holder.value) == "self"
        dataset = argument(self.ctx, node, "dataset", DATASET_POSITION)
        loader_name = dotted_name(holder) if self_held else held
        if self.ctx.datasets.changed_between_epochs(dataset, loader_name):
            return  # persistent workers would keep a stale copy of a dataset changed between epochs
        self._reportable[id(node)] = fix
        if returned_by_epoch_hook(self.ctx, node) or self._iterated_again_by_call(node):
            self.report(node, replacements=fix)  # Lightning iterates it again every epoch
        elif self_held and self.ctx.scope.function.name not in _ONE_PASS_HOOKS:
            self.report(node, replacements=fix)  # kept on the object to be iterated again
        elif self._training_loader_handed_back(node, parent, held):
            self.report(node, replacements=fix)
        else:
            if self._returned_alone(parent, held):
                self._returned.append((node, self.ctx.scope.function))
            if held is not None:
                self._pending[(self.ctx.scope.function, held)] = node

    def _training_loader_handed_back(self, node: cst.Call, parent, held: Optional[str]) -> bool:
        """A shuffled ``DataLoader``, or one with a sampler of its own (a training loader: training
        runs epochs), that its function returns (``return DataLoader(train_set, shuffle=True,
        ...)``, ``return train_loader, val_loader``) for the caller to iterate every epoch, and an
        evaluation loader returned beside one (``return train_iter, test_iter``: the loop that
        takes both evaluates every epoch); not one built for a given epoch (``build_iter(self,
        epoch)``). (A subclass may keep its workers itself: YOLO's ``InfiniteDataLoader``
        iterates one endless sampler.)"""
        if self.ctx.qualname(node.func) != DATALOADER:
            return False
        function = self.ctx.scope.function
        if isinstance(function.node, cst.FunctionDef) and any(
            EPOCH_NAME.search(param.name.value) for param in function.node.params.params
        ):
            return False  # build_iter(self, epoch): a loader built anew for each epoch
        if self._endless_sampler(node):
            return False  # iterated once for the whole run: its workers never restart
        beside = self._returned_tuple(node, held)
        if not self._trains(node):  # an evaluation loader returned with a training loader
            return beside is not None and any(self._trains(loader) for loader in map(self._loader_call, beside) if loader)
        return beside is not None or self._returned_alone(parent, held)

    def _returned_alone(self, parent: cst.CSTNode, held: Optional[str]) -> bool:
        """Does the function return the loader itself (``return DataLoader(...)``, or the name
        ``held`` it was assigned to)?"""
        return isinstance(parent, cst.Return) or (held is not None and held in self.ctx.returned_names())

    def _trains(self, node: cst.Call) -> bool:
        """Is the ``DataLoader`` call shuffled, or given a sampler of its own (a training sampler
        shuffles itself)?"""
        shuffle = argument(self.ctx, node, "shuffle", SHUFFLE_POSITION)
        return (shuffle is not None and literal_value(shuffle) not in (False, None)) or any(
            arg is not None and not is_name(arg.value, "None")
            for arg in (keyword(node, "sampler"), keyword(node, "batch_sampler"))
        )

    def _endless_sampler(self, node: cst.Call) -> bool:
        """Is the loader's sampler an object of a class of the file whose ``__iter__`` never ends
        (``while True: yield from torch.randperm(n).tolist()``: detectron2's TrainingSampler)?"""
        for arg in (keyword(node, "sampler"), keyword(node, "batch_sampler")):
            value = arg.value if arg is not None else None
            cls = self.ctx.datasets.classes().get(value.func.value) if isinstance(value, cst.Call) and isinstance(
                value.func, cst.Name
            ) else None
            iterate = method_def(cls, "__iter__") if cls is not None else None
            if iterate is not None and any(
                isinstance(loop, cst.While) and is_name(loop.test, "True") for loop in descendants(iterate.body)
            ):
                return True
        return False

    def _returned_tuple(self, node: cst.Call, held: Optional[str]) -> Optional[List[cst.BaseExpression]]:
        """The elements of a tuple, list or dict the current function returns that holds
        ``node``, or the name holding it (``return train_iter, test_iter``, ``return {"train":
        train_loader, "val": val_loader}``)."""
        function = self.ctx.scope.function.node
        if not isinstance(function, cst.FunctionDef):
            return None
        for line in simple_statements(function.body):
            for returned in line.body:
                if isinstance(returned, cst.Return) and isinstance(returned.value, (cst.Tuple, cst.List, cst.Dict)):
                    values = [element.value for element in returned.value.elements if isinstance(element, (cst.Element, cst.DictElement))]
                    if any(value is node or (held is not None and is_name(value, held)) for value in values):
                        return values
        return None

    def _loader_call(self, value: cst.BaseExpression) -> Optional[cst.Call]:
        """The DataLoader call ``value`` is, or that the name ``value`` was assigned (so far)."""
        if isinstance(value, cst.Name):
            value = self.ctx.value_of(value.value)
        return value if isinstance(value, cst.Call) and dataloader_call(self.ctx, value) else None

    def visit_Name(self, node: cst.Name) -> None:
        """A loader named in the body of a loop (an epoch loop) after it was built, or handed to
        a generator that walks it endlessly (``self.dl = cycle(dl)``), is iterated again."""
        if not self._pending:
            return
        key = (self.ctx.scope.function, node.value)
        loader = self._pending.get(key)
        if loader is not None and (self._in_epoch_loop(node.value) or self._iterated_again_by_call(node)):
            del self._pending[key]
            self.report(loader, replacements=self._reportable[id(loader)])

    def visit_For(self, node: cst.For) -> None:
        ref = self.ctx.loaders.ref(unwrap_iteration(self.ctx, node.iter))
        if ref is not None:  # the walk is in this loop's own scope: is an enclosing one a loop?
            self._loops.append((ref, self.ctx.scope.function, in_loop(self.ctx.scope.parent)))

    def leave_Module(self, node: cst.Module) -> None:
        """Loaders iterated in a function that is called from a loop (``for epoch ...: train()``),
        and loaders returned to a caller that keeps them on ``self`` (``self.evalloaders.append(
        self._eval_loader(ds))``) to iterate them again."""
        for loader, function in self._returned:
            if self.ctx.loaders.kept_on_self(function):
                self.report(loader, replacements=self._reportable[id(loader)])
        for ref, function, nested in self._loops:
            if nested:
                loaders = self.ctx.loaders.resolve(ref)
            elif ref[0] == "param" and ref[1] is function:  # only what the calls in a loop pass
                loaders = self.ctx.loaders.passed_in_loops(function, ref[2])
            elif any(in_loop(caller) for caller in self.ctx.loaders.callers(function)):
                loaders = self.ctx.loaders.resolve(ref)
            else:
                continue
            for loader in loaders:
                if id(loader) in self._reportable:
                    self.report(loader, replacements=self._reportable[id(loader)])

    def _iterated_again_by_call(self, node: cst.BaseExpression) -> bool:
        """Is ``node`` (a loader) handed to a generator that cycles it (``cycle(dl)``) or to
        Lightning's ``trainer.fit(model, loader)``, which iterate it again and again?"""
        ancestors = self.ctx.ancestors
        if len(ancestors) < 2 or not isinstance(ancestors[-1], cst.Arg) or not isinstance(ancestors[-2], cst.Call):
            return False
        call = ancestors[-2]
        return cycled(self.ctx, call) is node or any(value is node for value in fitted(call))

    def _in_epoch_loop(self, name: str) -> bool:
        """Is the name inside the body of a loop that does not itself iterate it? (The body of
        ``for i, b in enumerate(loader)`` mentioning ``len(loader)`` is still one pass.)"""
        ancestors = self.ctx.ancestors
        for outer, inner in zip(ancestors, ancestors[1:]):
            if isinstance(outer, (cst.For, cst.While)) and inner is outer.body:
                if not (isinstance(outer, cst.For) and name in {n.value for n in descendants(outer.iter) if isinstance(n, cst.Name)}):
                    return True
        return False

    def _fix(self, node: cst.Call, workers: cst.BaseExpression, indentation) -> Optional[tuple]:
        """The replacement that adds ``persistent_workers``; () for no fix, None when not reported."""
        value = literal_value(workers)
        if spread_changed(self.ctx, node):
            return ()  # `if use_cuda: kwargs.update(num_workers=1)`: on the other path no workers to keep
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            persistent: cst.BaseExpression = cst.Name("True")
        elif isinstance(workers, (cst.Name, cst.Attribute)):
            persistent = cst.Comparison(workers, [cst.ComparisonTarget(cst.GreaterThan(), cst.Integer("0"))])
        elif isinstance(workers, (cst.Call, cst.BinaryOperation, cst.IfExp, cst.Subscript)):
            return ()
        else:
            return None
        fixed = with_keyword(node, "persistent_workers", persistent)
        return (Replacement(node, code_in_block(self.ctx.module, fixed, indentation)),)
