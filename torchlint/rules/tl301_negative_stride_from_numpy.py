"""TL301 negative-stride-from-numpy: a reversed numpy view handed to ``torch.from_numpy``."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchlint.context.dataflow import MAX_TRAIL
from torchlint.rewrite import code_in_block
from torchlint.rules.base import Invalid, Replacement, Rule, Valid
from torchlint.syntax import has_star_args, method_call, positional


# numpy functions and array methods that return a view with the same strides, permuted.
_PERMUTING_FUNCTIONS = frozenset({"numpy.transpose", "numpy.swapaxes", "numpy.moveaxis", "numpy.rollaxis"})
_PERMUTING_METHODS = frozenset({"transpose", "swapaxes"})


# numpy functions that return a view with a negative stride.
_REVERSING_FUNCTIONS = frozenset({"numpy.flip", "numpy.flipud", "numpy.fliplr", "numpy.rot90"})


def _negative_step(node: cst.Subscript) -> bool:
    """``a[:, :, ::-1]``: a slice with a negative literal step."""
    for element in node.slice:
        index = element.slice
        if isinstance(index, cst.Slice) and isinstance(index.step, cst.UnaryOperation):
            step = index.step
            if isinstance(step.operator, cst.Minus) and isinstance(step.expression, cst.Integer):
                return True
    return False


class NegativeStrideFromNumpy(Rule):
    code = "TL301"
    name = "negative-stride-from-numpy"
    message = (
        "array with a negative stride (reversed by `[::-1]` or `np.flip`) reaches `torch.from_numpy`, "
        "which rejects it; make it contiguous with `np.ascontiguousarray` first"
    )
    fix = "safe"
    triggers = ("from_numpy",)
    what = (
        "Finds `torch.from_numpy(a)` where `a` is a numpy view with a negative stride: a slice with "
        "a negative step (`img[:, :, ::-1]`, the usual BGR to RGB swap) or `np.flip` / `np.flipud` / "
        "`np.fliplr` / `np.rot90`, possibly followed by transposes (`.transpose(...)`, "
        "`np.transpose`, `.swapaxes`, `.T`), in the same expression or through reassignments in "
        "the same function (`img = img[:, :, ::-1]` ... `img = img.transpose(2, 0, 1)` ... "
        "`torch.from_numpy(img)`), with no copy (`np.ascontiguousarray`, `.copy()`, `.astype(...)`, "
        "`np.array(...)`) in between. A plain transpose without a reversal is not reported: see "
        "*Measured*."
    )
    why = (
        "`torch.from_numpy` shares the array's memory and needs strides a tensor can express; "
        "tensors have no negative strides, so it raises `ValueError: At least one stride in the "
        "given numpy array is negative`. When the reversal is conditional (a random horizontal "
        "flip in an augmentation), the loader crashes only on the samples that were flipped, "
        "possibly hours into training, inside a worker process. One explicit contiguous copy "
        "makes the memory a tensor can share."
    )
    example = Invalid("""
        import cv2
        import torch

        def load(path):
            img = cv2.imread(path)
            img = img[:, :, ::-1].transpose(2, 0, 1)  # BGR to RGB, HWC to CHW
            return torch.from_numpy(img)  # expect: TL301
    """)
    use_instead = Valid("""
        import cv2
        import numpy as np
        import torch

        def load(path):
            img = cv2.imread(path)
            img = img[:, :, ::-1].transpose(2, 0, 1)  # BGR to RGB, HWC to CHW
            return torch.from_numpy(np.ascontiguousarray(img))
    """)
    fix_safety = (
        "Safe: the call raised before the fix, and afterwards the tensor holds the same values in a "
        "fresh contiguous array. The fix reuses the module's numpy alias and adds "
        "`import numpy as np` after the last top-level import when numpy is not imported."
    )
    valid = (
        Valid("""
            import numpy as np, torch
            t = torch.from_numpy(img.transpose(2, 0, 1))
        """),
        Valid("""
            import numpy as np, torch
            t = torch.from_numpy(np.ascontiguousarray(img[:, :, ::-1]))
        """),
        Valid("""
            import torch
            t = torch.from_numpy(img[:, :, ::-1].copy())
        """),
        Valid("""
            import numpy as np, torch
            t = torch.from_numpy(img[:, :, ::-1].astype(np.float32))
        """),
        Valid("""
            import numpy as np, torch
            img = img[:, :, ::-1]
            img = np.ascontiguousarray(img)
            t = torch.from_numpy(img)
        """),
        Valid("""
            import torch
            img = img[:, :, ::-1]
            img = img.copy()
            t = torch.from_numpy(img.transpose(2, 0, 1))
        """),
        Valid("""
            import torch
            t = torch.from_numpy(img[::2])
        """),
        Valid("""
            import torch
            t = torch.tensor(labels[::-1])
        """),
        Valid("""
            import torch
            t = torch.from_numpy(x).flip(0)
        """),
        Valid("""
            import torch
            def f(img):
                img = img[::-1]

            def g(img):
                return torch.from_numpy(img)
        """),
        Valid("""
            import torch
            for img in images[::-1]:
                t = torch.from_numpy(img)
        """),
        Valid("""
            import numpy as np, torch
            img = img.transpose((2, 0, 1))[::-1]  # HWC to CHW, BGR to RGB
            img = np.ascontiguousarray(img)
            t = torch.from_numpy(img)
        """),
        Valid("""
            import numpy as np, torch
            t = torch.from_numpy(np.flip(img, axis=1).copy())
        """),
        Valid("""
            import torch
            x = img[::-1]
            img = other
            t = torch.from_numpy(img)
        """),
    )
    invalid = (
        Invalid("""
            import numpy as np
            import torch
            t = torch.from_numpy(img[:, :, ::-1])  # expect: TL301
        """, fixed="""
            import numpy as np
            import torch
            t = torch.from_numpy(np.ascontiguousarray(img[:, :, ::-1]))
        """),
        Invalid("""
            import torch
            import numpy

            def load(img):
                img = img[:, :, ::-1]
                img = img.transpose(2, 0, 1)
                return torch.from_numpy(img)  # expect: TL301
        """, fixed="""
            import torch
            import numpy

            def load(img):
                img = img[:, :, ::-1]
                img = img.transpose(2, 0, 1)
                return torch.from_numpy(numpy.ascontiguousarray(img))
        """),
        Invalid("""
            import random
            import torch

            def augment(img):
                if random.random() < 0.5:
                    img = img[:, ::-1]
                return torch.from_numpy(img.transpose(2, 0, 1))  # expect: TL301
        """, fixed="""
            import random
            import torch
            import numpy as np

            def augment(img):
                if random.random() < 0.5:
                    img = img[:, ::-1]
                return torch.from_numpy(np.ascontiguousarray(img.transpose(2, 0, 1)))
        """),
        Invalid("""
            import numpy as onp
            from torch import from_numpy
            x = from_numpy(onp.flip(a, 0).T)  # expect: TL301
        """, fixed="""
            import numpy as onp
            from torch import from_numpy
            x = from_numpy(onp.ascontiguousarray(onp.flip(a, 0).T))
        """),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) != "torch.from_numpy" or has_star_args(node):
            return
        args = positional(node)
        if len(args) == 1 and self._reversed(args[0].value):
            self.report(node, replacements=self._fix(args[0].value))

    def _reversed(self, node: cst.BaseExpression) -> bool:
        """Is ``node`` a view with a negative stride, following views and reassignments?"""
        assigned: Optional[cst.BaseExpression] = None  # the assignment being looked through
        for _ in range(MAX_TRAIL):
            if isinstance(node, cst.Name):
                value = self.ctx.value_of(node.value, before=assigned)
                if value is None:
                    return False
                node = assigned = value
            elif isinstance(node, cst.Subscript):
                if _negative_step(node):
                    return True
                node = node.value
            elif isinstance(node, cst.Attribute) and node.attr.value == "T":
                node = node.value
            elif isinstance(node, cst.Call):
                name = self.ctx.qualname(node.func) or ""
                if name in _REVERSING_FUNCTIONS:
                    return True
                args = positional(node)
                if name in _PERMUTING_FUNCTIONS and args:
                    node = args[0].value
                elif method_call(node, *_PERMUTING_METHODS):
                    node = node.func.value
                else:
                    return False  # a copy, or something unknown
            else:
                return False
        return False

    def _fix(self, argument: cst.BaseExpression):
        alias = self.ctx.imports.alias_of("numpy")
        code = code_in_block(self.ctx.module, argument, self.ctx.indentation())
        replacements = [Replacement(argument, f"{alias or 'np'}.ascontiguousarray({code})")]
        if alias is None:
            anchor = self._last_import()
            if anchor is None:
                return ()
            text = self.ctx.module.code_for_node(anchor)
            newline = self.ctx.module.default_newline
            replacements.append(Replacement(anchor, f"{text}import numpy as np{newline}"))
        return replacements

    def _last_import(self) -> Optional[cst.CSTNode]:
        last = None
        for statement in self.ctx.module.body:
            if isinstance(statement, cst.SimpleStatementLine) and any(
                isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
            ):
                last = statement
        return last
