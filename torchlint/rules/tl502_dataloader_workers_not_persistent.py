"""TL502 dataloader-workers-not-persistent: worker processes started anew every epoch."""

from __future__ import annotations

from typing import Dict, Optional, Tuple

import libcst as cst

from torchlint.context.loaders import DATASET_POSITION, NUM_WORKERS_POSITION, argument, dataloader_call
from torchlint.rewrite import Replacement, code_in_block, with_keyword
from torchlint.rules.base import Invalid, Rule, Valid
from torchlint.syntax import dotted_name, keyword, literal_value


_EPOCH_HOOKS = frozenset({"train_dataloader", "val_dataloader"})  # Lightning: re-iterated every epoch


class DataloaderWorkersNotPersistent(Rule):
    code = "TL502"
    name = "dataloader-workers-not-persistent"
    message = (
        "DataLoader starts its worker processes anew for every epoch; pass `persistent_workers=True` "
        "to keep them alive between epochs"
    )
    fix = "unsafe"
    triggers = ("DataLoader",)
    what = (
        "Finds `torch.utils.data.DataLoader(...)` with worker processes (`num_workers` a literal "
        "above 0, or a variable) and no `persistent_workers` argument, when the loader is iterated "
        "more than once: it is named inside the body of a loop (an epoch loop) after being built in "
        "the same function, kept on `self`, or returned by a Lightning `train_dataloader` / "
        "`val_dataloader` hook, which Lightning iterates every epoch."
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
        "`DataLoader` rejects persistent workers when `num_workers` is 0. Not reported when the "
        "call passes `*args`/`**kwargs`, gives `persistent_workers` in any form, or is built inside "
        "a loop (a loader made anew every epoch gains nothing: build it once), when nothing shows the "
        "loader is iterated twice (a one-shot evaluation loader, `test_dataloader`), when the code "
        "changes the dataset between epochs (`ds.set_epoch(epoch)` or `ds.level = k` in the epoch "
        "loop, or, for a dataset kept on `self`, in a method other than `__init__`/`setup`), which "
        "persistent workers would not see, or in test code."
    )
    valid = (
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
            loader = DataLoader(ds, num_workers=4, **kwargs)
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
        # (function, loader name) -> (loader call, fix, dataset argument)
        self._pending: Dict[Tuple[object, str], Tuple[cst.Call, tuple, Optional[cst.BaseExpression]]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        if not dataloader_call(self.ctx, node) or keyword(node, "persistent_workers") is not None:
            return
        if self.ctx.scope.kind == "loop" or self.ctx.is_test_module:
            return
        workers = argument(node, "num_workers", NUM_WORKERS_POSITION)
        fix = self._fix(node, workers, self.ctx.indentation()) if workers is not None else None
        if fix is None:
            return
        parent = self.ctx.parent
        dataset = argument(node, "dataset", DATASET_POSITION)
        if isinstance(parent, cst.Return) and self.ctx.scope.function.name in _EPOCH_HOOKS:
            self._report_unless_changed(node, fix, dataset, None)  # Lightning iterates it again every epoch
        elif isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            target = parent.targets[0].target
            if isinstance(target, cst.Attribute) and dotted_name(target.value) == "self":
                # kept on the object to be iterated again
                self._report_unless_changed(node, fix, dataset, dotted_name(target))
            elif isinstance(target, cst.Name):
                self._pending[(self.ctx.scope.function, target.value)] = (node, fix, dataset)

    def visit_Name(self, node: cst.Name) -> None:
        """A loader named in the body of a loop (an epoch loop) after it was built is iterated again."""
        if not self._pending:
            return
        pending = self._pending.pop((self.ctx.scope.function, node.value), None)
        if pending is None:
            return
        if self._in_loop_body():
            loader, fix, dataset = pending
            self._report_unless_changed(loader, fix, dataset, node.value)
        else:
            self._pending[(self.ctx.scope.function, node.value)] = pending

    def _report_unless_changed(self, loader: cst.Call, fix: tuple, dataset, loader_name: Optional[str]) -> None:
        """Persistent workers would keep a stale copy of a dataset changed between epochs."""
        if not self.ctx.datasets.changed_between_epochs(dataset, loader_name):
            self.report(loader, replacements=fix)

    def _in_loop_body(self) -> bool:
        ancestors = self.ctx.ancestors
        for outer, inner in zip(ancestors, ancestors[1:]):
            if isinstance(outer, (cst.For, cst.While)) and inner is outer.body:
                return True
        return False

    def _fix(self, node: cst.Call, workers: cst.BaseExpression, indentation) -> Optional[tuple]:
        """The replacement that adds ``persistent_workers``; () for no fix, None when not reported."""
        value = literal_value(workers)
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
