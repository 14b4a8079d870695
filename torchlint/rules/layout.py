"""TL3xx: memory layout of arrays handed to torch."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchlint.rules.base import Invalid, Replacement, Rule
from torchlint.rules.calls import code_in_block, has_star_args, method_call, positional

# numpy functions and array methods that return a view with the same strides, permuted.
_PERMUTING_FUNCTIONS = frozenset({"numpy.transpose", "numpy.swapaxes", "numpy.moveaxis", "numpy.rollaxis"})
_PERMUTING_METHODS = frozenset({"transpose", "swapaxes"})
# numpy functions that return a view with a negative stride.
_REVERSING_FUNCTIONS = frozenset({"numpy.flip", "numpy.flipud", "numpy.fliplr", "numpy.rot90"})
_MAX_STEPS = 20  # a trail of reassignments longer than this is not followed


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
    example = (
        "img = cv2.imread(path)\n"
        "img = img[:, :, ::-1].transpose(2, 0, 1)  # BGR to RGB, HWC to CHW\n"
        "tensor = torch.from_numpy(img)"
    )
    use_instead = (
        "img = cv2.imread(path)\n"
        "img = img[:, :, ::-1].transpose(2, 0, 1)  # BGR to RGB, HWC to CHW\n"
        "tensor = torch.from_numpy(np.ascontiguousarray(img))"
    )
    fix_safety = (
        "Safe: the call raised before the fix, and afterwards the tensor holds the same values in a "
        "fresh contiguous array. The fix reuses the module's numpy alias and adds "
        "`import numpy as np` after the last top-level import when numpy is not imported."
    )
    measured = (
        "Not a timing rule: the code it finds raises `ValueError` (checked with torch 2.13.0 and "
        "numpy 2). `torchlint bench` times the fixture's evaluation path, where no flip happens and "
        "both sides run, to show what the fix's copy costs: 1.01x (paired range 0.98-1.03x, i.e. no "
        "effect) for 8 images of 64x64 into a small conv net, CPU (2-core AMD EPYC, one thread, "
        "torch 2.13.0). Plain transposes (`img.transpose(2, 0, 1)` of an HWC image) are deliberately not "
        "reported. In the project's CPU notes (2 cores, torch 2.13.0, one thread; not `torchlint bench`) making them contiguous measured 0.87-"
        "1.00x through a DataLoader, whose collate re-packs the batch anyway, and 0.59-0.64x "
        "(slower) when an NHWC batch viewed as NCHW is fed directly, because that view has exactly "
        "`channels_last` strides and oneDNN runs the whole net faster in that format. A permutation "
        "that is neither contiguous nor `channels_last` measured about 1x: the first convolution "
        "makes it contiguous itself, the same one copy the fix would add."
    )
    valid = (
        "import numpy as np, torch\nt = torch.from_numpy(img.transpose(2, 0, 1))",
        "import numpy as np, torch\nt = torch.from_numpy(np.ascontiguousarray(img[:, :, ::-1]))",
        "import torch\nt = torch.from_numpy(img[:, :, ::-1].copy())",
        "import numpy as np, torch\nt = torch.from_numpy(img[:, :, ::-1].astype(np.float32))",
        "import numpy as np, torch\nimg = img[:, :, ::-1]\nimg = np.ascontiguousarray(img)\nt = torch.from_numpy(img)",
        "import torch\nimg = img[:, :, ::-1]\nimg = img.copy()\nt = torch.from_numpy(img.transpose(2, 0, 1))",
        "import torch\nt = torch.from_numpy(img[::2])",
        "import torch\nt = torch.tensor(labels[::-1])",
        "import torch\nt = torch.from_numpy(x).flip(0)",
        "import torch\ndef f(img):\n    img = img[::-1]\n\ndef g(img):\n    return torch.from_numpy(img)",
        "import torch\nfor img in images[::-1]:\n    t = torch.from_numpy(img)",
        "import numpy as np, torch\nimg = img.transpose((2, 0, 1))[::-1]  # HWC to CHW, BGR to RGB\n"
        "img = np.ascontiguousarray(img)\nt = torch.from_numpy(img)",
        "import numpy as np, torch\nt = torch.from_numpy(np.flip(img, axis=1).copy())",
        "import torch\nx = img[::-1]\nimg = other\nt = torch.from_numpy(img)",
    )
    invalid = (
        Invalid(
            "import numpy as np\nimport torch\nt = torch.from_numpy(img[:, :, ::-1])\n",
            "import numpy as np\nimport torch\nt = torch.from_numpy(np.ascontiguousarray(img[:, :, ::-1]))\n",
        ),
        Invalid(
            "import torch\nimport numpy\n\ndef load(img):\n    img = img[:, :, ::-1]\n"
            "    img = img.transpose(2, 0, 1)\n    return torch.from_numpy(img)\n",
            "import torch\nimport numpy\n\ndef load(img):\n    img = img[:, :, ::-1]\n"
            "    img = img.transpose(2, 0, 1)\n    return torch.from_numpy(numpy.ascontiguousarray(img))\n",
        ),
        Invalid(
            "import random\nimport torch\n\ndef augment(img):\n    if random.random() < 0.5:\n"
            "        img = img[:, ::-1]\n    return torch.from_numpy(img.transpose(2, 0, 1))\n",
            "import random\nimport torch\nimport numpy as np\n\ndef augment(img):\n    if random.random() < 0.5:\n"
            "        img = img[:, ::-1]\n    return torch.from_numpy(np.ascontiguousarray(img.transpose(2, 0, 1)))\n",
        ),
        Invalid(
            "import numpy as onp\nfrom torch import from_numpy\nx = from_numpy(onp.flip(a, 0).T)\n",
            "import numpy as onp\nfrom torch import from_numpy\nx = from_numpy(onp.ascontiguousarray(onp.flip(a, 0).T))\n",
        ),
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
        for _ in range(_MAX_STEPS):
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
