"""TL301 negative-stride-from-numpy: a reversed numpy view handed to ``torch.from_numpy``."""

from __future__ import annotations

import libcst as cst

from torchlint.context.arrays import REVERSED, arriving_layout, contiguous_fix, offer_returned_layouts
from torchlint.diagnostics import SAFE, UNSAFE
from torchlint.rules.base import Invalid, Rule, Valid
from torchlint.syntax import has_star_args, positional


class NegativeStrideFromNumpy(Rule):
    code = "TL301"
    name = "negative-stride-from-numpy"
    message = (
        "array with a negative stride (reversed by `[::-1]` or `np.flip`) reaches `torch.from_numpy`, "
        "which rejects it; make it contiguous with `np.ascontiguousarray` first"
    )
    fix = "safe"
    raises = ValueError  # "At least one stride in the given numpy array is negative"
    # the files that call torch.from_numpy, and those that reverse arrays they may return to one
    triggers = ("from_numpy", "::-1", "flip", "rot90")
    what = (
        "Finds `torch.from_numpy(a)` where `a` is a numpy view with a negative stride: a slice with "
        "a negative step (`img[:, :, ::-1]`, the usual BGR to RGB swap) or `np.flip` / `np.flipud` / "
        "`np.fliplr` / `np.rot90`, possibly followed by transposes (`.transpose(...)`, "
        "`np.transpose`, `.swapaxes`, `.T`), in the same expression or through reassignments in "
        "the same function (`img = img[:, :, ::-1]` ... `img = img.transpose(2, 0, 1)` ... "
        "`torch.from_numpy(img)`), or returned by a function of the project (`bgr_to_rgb(img)`, also "
        "of another module), with no copy (`np.ascontiguousarray`, `.copy()`, `.astype(...)`, "
        "`np.array(...)`, arithmetic) in between. A plain transpose without a reversal is TL302's."
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
        "Wraps the array in `np.ascontiguousarray(...)`, with the module-level numpy alias; when "
        "numpy is not imported at module level (an import inside a function does not count: its "
        "name is not bound where the fix may land) it adds `import numpy as np` after the last "
        "top-level import. **Safe** when the array is reversed on every path to `from_numpy`: the "
        "call raised before the fix, and afterwards the tensor holds the same values in a fresh "
        "array. **Unsafe** when the reversal is conditional (`if hflip: img = img[:, ::-1]`): on the "
        "path that never reversed, the tensor used to share the caller's memory (writes through it "
        "reached the array) and now holds a copy."
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
        layout = arriving_layout(self.ctx, args[0].value) if len(args) == 1 else None
        if layout is not None and layout.kind == REVERSED:
            # where the reversal is conditional, the other path loses its memory sharing
            level = UNSAFE if layout.conditional else SAFE
            self.report(node, replacements=contiguous_fix(self.ctx, args[0].value), applicability=level)

    def leave_Module(self, node: cst.Module) -> None:
        offer_returned_layouts(self.ctx)
