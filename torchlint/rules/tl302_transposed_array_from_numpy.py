"""TL302 transposed-array-from-numpy: a permuted numpy view handed to ``torch.from_numpy``."""

from __future__ import annotations

import functools
from collections import defaultdict
from typing import Callable, Dict, List, Optional, Set, Tuple, Union

import libcst as cst

from torchlint.context.arrays import PERMUTED, arriving_layout, contiguous_fix, offer_returned_layouts
from torchlint.context.calls import arguments_by_parameter, parameter_position
from torchlint.context.dataflow import MAX_TRAIL
from torchlint.context.scopes import Scope
from torchlint.context.tensors import NOT
from torchlint.rules.base import Invalid, Rule, Valid
from torchlint.syntax import assigned_name, dotted_name, has_star_args, is_name, method_call, positional
from torchlint.walker import descendants

# Tensor methods after `from_numpy` that keep the strides (views and casts).
_KEEPS_STRIDES = frozenset(
    "float double half bfloat16 long int short bool byte to cuda unsqueeze squeeze view detach requires_grad_ "
    "type type_as clone div mul add sub true_divide pow neg abs sqrt exp log clamp sigmoid tanh "
    "div_ mul_ add_ sub_ clamp_".split()  # element-wise methods give their result the input's strides
)
# Constructors that take an array like `from_numpy` and keep its strides, also where they copy
# (measured: `torch.tensor(a.T, dtype=torch.float)` is not contiguous); they take tensors too.
_CONVERTERS = frozenset({"torch.as_tensor", "torch.asarray", "torch.tensor"}) | frozenset(
    f"torch.{kind}Tensor" for kind in ("", "Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Char", "Byte", "Bool")
)
# Joins whose result is a fresh contiguous tensor (DataLoader's default collate stacks too).
_JOINS = frozenset({"torch.stack", "torch.cat", "torch.concat", "torch.concatenate"})
_PERMUTED = "@permuted"  # the key a call in another module tells a function's parameter by
# A from_numpy stored in a name: the call, the stored expression, its fix, the branches it
# was stored in, and the parameter whose callers decide (None: reported as it is).
_Stored = Tuple[cst.Call, cst.CSTNode, tuple, Dict[int, int], Optional[Tuple[int, str]]]


class TransposedArrayFromNumpy(Rule):
    code = "TL302"
    name = "transposed-array-from-numpy"
    message = (
        "transposed numpy array reaches `torch.from_numpy` without a contiguous copy: the tensor is "
        "strided like channels-last, so the network it feeds runs in that layout by accident, "
        "faster on some GPUs and slower on others; choose the layout deliberately"
    )
    preview = True  # on an H100 the pattern measured faster than its fix: see `why`
    fix = "unsafe"
    # the files that call torch.from_numpy, and those that permute arrays they may pass to one
    triggers = ("from_numpy", "transpose", "swapaxes", "moveaxis", "rollaxis")
    what = (
        "Finds `torch.from_numpy(a)` where `a` is a numpy array permuted by `.transpose(...)`, "
        "`np.transpose`, `.swapaxes`, `np.moveaxis` or `.T` (an HWC image turned CHW is the usual "
        "case), followed through reassignments in the same function (also in place, `x /= 255.0`, "
        "and of a dict's key: `sample[\"image\"] = np.transpose(sample[\"image\"], (2, 0, 1))`), "
        "every path through an `if` and both sides of conditional expressions, `self` attributes, "
        "the return values of the "
        "project's functions (`to_chw(img)`, `image_utils.hwc_to_chw(img)` of another module, an "
        "element of a returned tuple: `data, props = load_case(path)`, also after `data = (data - m) / s`, and what a helper is given "
        "and returns: `normalize(vol.transpose(3, 0, 1, 2))`), and into the parameter of a "
        "function of the file, or of another module of the project, that a call passes the array "
        "to (also handed on through other functions' parameters), with no `np.ascontiguousarray` "
        "or `.copy()` in between. `astype`, `np.float32(...)`, `np.array`, `np.clip`/`.clip` and "
        "arithmetic (`img / 255.0`, `(x - mean[:, None, None]) / std`) make a new array in the same "
        "axis order, so they do not help, nor does `np.stack`/`np.concatenate` of arrays all permuted "
        "(`np.stack([v.transpose(2, 1, 0) for v in vols])`; of mixed layouts the result is C-contiguous); a matrix product (`a.T @ b`) and a vector indexed out of "
        "a 2-D `.T` (`wav.T[:, 0]`) do. Not reported when the tensor is made "
        "contiguous right after (`torch.from_numpy(a).contiguous()`, a later `t = t.contiguous()`, "
        "also after casts and element-wise methods, which keep the strides: `.float().div(255)."
        "contiguous()`), given a layout on purpose (`.to(device, memory_format=torch.channels_last)`) "
        "or joined into a new tensor (`torch.stack([...])`; also by every caller of the function that "
        "returns it: `transformed.append(self.resample(channel))` ... `torch.stack(transformed)`), nor when it is copied into another "
        "(`conv.weight.data.copy_(torch.from_numpy(w.T))`: the copy takes the destination's layout). A reversed array (`img[:, :, ::-1]`) "
        "is TL301's: `from_numpy` rejects it. Nor in the code a test module runs once (its module "
        "level, `test_*` functions and their set-up). The constructors that take an array the same "
        "way (`torch.as_tensor`, `torch.asarray`) or copy it keeping its strides (`torch.tensor(a.T)` "
        "and the typed `torch.FloatTensor(a)` family: measured, the copy is not contiguous) are "
        "reported too where what they are given is a numpy array, not a tensor: it comes from a numpy "
        "function, `astype`, a transpose of more than two axes (a tensor's takes two), or a library "
        "that returns arrays (`audio, sr = soundfile.read(path)`)."
    )
    why = (
        "`torch.from_numpy` shares the array's memory and keeps its strides, so a transposed view "
        "becomes a tensor with the strides of `channels_last`, `.to(device)` copies that layout "
        "over as it is, and convolutions follow their input's layout: the whole network runs in "
        "channels-last without anyone having chosen it. Whether that is slow depends on the GPU and "
        "cuDNN. pytorch/pytorch#44943 reports a network training over 10x slower with a permuted "
        "input; on an H100 with cuDNN 9.19, though, the fixture's ResNet-style training step ran "
        "1.9x faster in fp32 and 2.5x faster under autocast on the strided input than on a "
        "contiguous one, and the host copy the fix adds cost 5 ms a batch "
        "([input-layout.md](../input-layout.md), *Measured* below). So the rule is in preview: it "
        "finds a layout chosen by accident, but its fix is not a speedup everywhere. Where "
        "channels-last is the fast path, choose it on purpose (`model.to(memory_format="
        "torch.channels_last)` and `x.to(device, memory_format=torch.channels_last)`). Through a "
        "DataLoader the default collate stacks samples into a fresh contiguous batch, so the layout "
        "does not survive: the rule stays silent only where that is visible (a join with "
        "`torch.stack`/`torch.cat`, also of the name the tensor is stored in, later on the same "
        "path: `s1 = torch.from_numpy(...)` ... `torch.cat([s1, s2])`)."
    )
    example = Invalid("""
        import cv2
        import torch

        def load(path):
            img = cv2.imread(path)
            return torch.from_numpy(img.transpose(2, 0, 1))  # expect: TL302
    """)
    use_instead = Valid("""
        import cv2
        import numpy as np
        import torch

        def load(path):
            img = cv2.imread(path)
            return torch.from_numpy(np.ascontiguousarray(img.transpose(2, 0, 1)))
    """)
    fix_safety = (
        "Unsafe: wraps the array in `np.ascontiguousarray(...)` (with the module's numpy alias, "
        "adding `import numpy as np` when numpy is not imported). The tensor then owns a copy "
        "instead of sharing the array's memory, so code that writes into the tensor and reads the "
        "array (or the other way round) sees a change."
    )
    valid = (
        Valid("""
            import numpy
            import torch

            def load_weights(conv, linear, fin):
                conv.weight.data.copy_(torch.FloatTensor(numpy.transpose(fin["W_cnn"][...], axes=(2, 1, 0))))
                linear.weight.data.copy_(torch.from_numpy(fin["W_proj"][...].T).float())  # into their own layout
        """),
        Valid("""
            import numpy as np
            import torch

            class RandomAffine:
                def apply(self, image):
                    transformed = []
                    for channel in image:
                        tensor = self.resample(channel)
                        transformed.append(tensor)
                    return torch.stack(transformed)  # every caller joins what resample returns

                def resample(self, channel):
                    array = np.asarray(channel).transpose()
                    return torch.as_tensor(array)
        """),
        Valid("""
            import torch

            def heads(x: torch.Tensor, q):
                k = torch.as_tensor(x.transpose(1, 2))  # a tensor's transpose: no numpy array
                return k, torch.tensor(q.T), torch.tensor([[1, 2], [3, 4]]).T
        """),
        Valid("""
            import numpy as np
            import torch
            def pair(image, mask):
                return torch.from_numpy(np.concatenate([image.transpose(2, 0, 1), mask[None]]))  # mixed: C order
        """),
        Valid("""
            import numpy as np
            import pytest
            import torch

            X = torch.from_numpy(np.vstack([np.random.rand(8) for _ in range(4)]).transpose())

            def test_layer(layer, weight):
                layer.weight.data = torch.from_numpy(weight.T)
        """),
        Valid("""
            import numpy as np
            import torch
            def load(s1, s2):
                s1 = torch.from_numpy(np.rollaxis(s1, 2, 0))
                s2 = torch.from_numpy(np.rollaxis(s2, 2, 0))
                return torch.cat([s1, s2]).float()  # the join copies both into a new contiguous tensor
        """),
        Valid("""
            import numpy as np
            import torch
            t = torch.from_numpy(np.ascontiguousarray(img.transpose(2, 0, 1)))
        """),
        Valid("""
            import torch
            t = torch.from_numpy(img.transpose(2, 0, 1).copy())
        """),
        Valid("""
            import torch
            t = torch.from_numpy(img).permute(2, 0, 1)
        """),
        Valid("""
            import torch
            t = torch.from_numpy(img.transpose(2, 0, 1)).contiguous()
        """),
        Valid("""
            import torch
            def load(img):
                t = torch.from_numpy(img.transpose(2, 0, 1))
                t = t.contiguous()
                return t
        """),
        Valid("""
            import torch
            def load(img, device):
                t = torch.from_numpy(img.transpose(2, 0, 1)).float()
                u = torch.from_numpy(img.transpose(2, 0, 1)).div(255).contiguous()  # element-wise: same strides
                v = torch.from_numpy(img.transpose(2, 0, 1)).to(device, memory_format=torch.channels_last)  # chosen
                return t.div(255).contiguous(), u, v
        """),
        Valid("""
            import torch
            batch = torch.stack([torch.from_numpy(im.transpose(2, 0, 1)) for im in images])
        """),
        Valid("""
            import numpy as np
            import torch
            def load(img):
                img = img.transpose(2, 0, 1)
                img = np.ascontiguousarray(img)
                return torch.from_numpy(img)
        """),
        Valid("""
            import numpy as np
            import torch

            def channel(wav, ref):
                x = wav.T
                if ref is not None:
                    x = x[ref]  # one row: a vector
                else:
                    x = np.ascontiguousarray(x)
                return torch.from_numpy(x)
        """),
        Valid("""
            import numpy as np
            import torch
            from PIL import Image
            t = torch.from_numpy(np.array(img.transpose(Image.FLIP_LEFT_RIGHT)))
        """),
        Valid("""
            import torch
            t = torch.from_numpy(img[:, :, ::-1].transpose(2, 0, 1))
        """),
        Valid("""
            import numpy as np
            import torch
            from PIL import Image

            def load(img, audio, features, points, r):
                rotated = torch.from_numpy(np.array(img.transpose(method=Image.ROTATE_90)))  # PIL's
                first = torch.from_numpy(audio.T[:, 0])  # an axis of a 2-D transpose indexed away: a vector
                gram = torch.from_numpy(features.T @ features)  # a matrix product: a new C-contiguous array
                return rotated, first, gram, torch.from_numpy(points @ r.T)
        """),
        Valid("""
            import numpy as np
            import torch
            t = torch.from_numpy(np.array([np.transpose(im, (2, 0, 1)) for im in images]))
        """),
        Valid("""
            import numpy as np
            import torch

            def to_tensor(array, device):
                return torch.from_numpy(array).to(device)

            def predict(net, img, device):  # every caller passes a contiguous array
                return net(to_tensor(np.ascontiguousarray(img.transpose(2, 0, 1)), device))
        """),
        Valid("""
            import numpy as np
            import pytest
            import torch

            def to_tensor(array):
                return torch.from_numpy(array)

            def test_transposed():  # a test runs once
                assert to_tensor(np.zeros((2, 3)).T).shape == (3, 2)
        """),
    )
    invalid = (
        Invalid("""
            import numpy as np
            import torch
            def stack_volumes(volumes):
                return torch.from_numpy(np.stack([v.transpose(2, 1, 0) for v in volumes]))  # expect: TL302
        """, fixed="""
            import numpy as np
            import torch
            def stack_volumes(volumes):
                return torch.from_numpy(np.ascontiguousarray(np.stack([v.transpose(2, 1, 0) for v in volumes])))
        """),
        Invalid("""
            import numpy as np
            import torch

            def norm_img(img):
                img = np.transpose(img, (2, 0, 1))
                img = img.astype("float32") / 255  # rebound: still the transposed layout
                return img

            def prepare(image, device):
                return torch.from_numpy(norm_img(image)).unsqueeze(0).to(device)  # expect: TL302
        """, fixed="""
            import numpy as np
            import torch

            def norm_img(img):
                img = np.transpose(img, (2, 0, 1))
                img = img.astype("float32") / 255  # rebound: still the transposed layout
                return img

            def prepare(image, device):
                return torch.from_numpy(np.ascontiguousarray(norm_img(image))).unsqueeze(0).to(device)
        """),
        Invalid("""
            import numpy as np
            import torch

            def normalize(img, mean, std):
                x = np.float32(img.transpose(2, 0, 1))
                x /= 255.0  # in place: the same array
                x = (x - mean[:, None, None]) / std[:, None, None]  # a new array, the same axis order
                return torch.from_numpy(x)  # expect: TL302
        """, fixed="""
            import numpy as np
            import torch

            def normalize(img, mean, std):
                x = np.float32(img.transpose(2, 0, 1))
                x /= 255.0  # in place: the same array
                x = (x - mean[:, None, None]) / std[:, None, None]  # a new array, the same axis order
                return torch.from_numpy(np.ascontiguousarray(x))
        """),
        Invalid("""
            import numpy as np
            import torch

            def load_case(path):
                return np.load(path).transpose(3, 0, 1, 2), path

            def clip(data):
                data -= data.mean()
                return data.clip(-3, 3)

            def predict(net, path):
                data, _ = load_case(path)
                return net(torch.from_numpy(clip(data)))  # expect: TL302
        """, fixed="""
            import numpy as np
            import torch

            def load_case(path):
                return np.load(path).transpose(3, 0, 1, 2), path

            def clip(data):
                data -= data.mean()
                return data.clip(-3, 3)

            def predict(net, path):
                data, _ = load_case(path)
                return net(torch.from_numpy(np.ascontiguousarray(clip(data))))
        """),
        Invalid("""
            import numpy as np
            import torch

            def load_case(path):
                return np.load(path).transpose(3, 0, 1, 2), path

            def predict(net, path):
                data, _ = load_case(path)
                data = (data - data.mean()) / data.std()  # rebinds the unpacked name: the same axis order
                return net(torch.from_numpy(data))  # expect: TL302
        """, fixed="""
            import numpy as np
            import torch

            def load_case(path):
                return np.load(path).transpose(3, 0, 1, 2), path

            def predict(net, path):
                data, _ = load_case(path)
                data = (data - data.mean()) / data.std()  # rebinds the unpacked name: the same axis order
                return net(torch.from_numpy(np.ascontiguousarray(data)))
        """),
        Invalid("""
            import numpy as np
            import torch

            def features(spec, n):
                feats = spec.T
                if feats.shape[0] < n:
                    feats = np.pad(feats, ((0, n - feats.shape[0]), (0, 0)))
                else:
                    feats = feats[:n]  # this path keeps the transpose
                return torch.from_numpy(feats)  # expect: TL302
        """, fixed="""
            import numpy as np
            import torch

            def features(spec, n):
                feats = spec.T
                if feats.shape[0] < n:
                    feats = np.pad(feats, ((0, n - feats.shape[0]), (0, 0)))
                else:
                    feats = feats[:n]  # this path keeps the transpose
                return torch.from_numpy(np.ascontiguousarray(feats))
        """),
        Invalid("""
            import torch

            def to_tensor(results, keys):
                for key in keys:
                    img = results[key]
                    results[key] = img.transpose(2, 0, 1) if img.ndim == 3 else img[None]
                    results[key] = torch.from_numpy(results[key])  # expect: TL302
                return results
        """, fixed="""
            import torch
            import numpy as np

            def to_tensor(results, keys):
                for key in keys:
                    img = results[key]
                    results[key] = img.transpose(2, 0, 1) if img.ndim == 3 else img[None]
                    results[key] = torch.from_numpy(np.ascontiguousarray(results[key]))
                return results
        """),
        Invalid("""
            import numpy as np
            import torch

            def load_volume(path):
                volume = np.load(path).transpose(3, 2, 0, 1)  # HWDC -> CDHW
                volume = np.clip(volume, -1000, 400)
                volume = (volume - volume.mean()) / volume.std()  # new arrays, the same axis order
                return torch.from_numpy(volume)  # expect: TL302
        """, fixed="""
            import numpy as np
            import torch

            def load_volume(path):
                volume = np.load(path).transpose(3, 2, 0, 1)  # HWDC -> CDHW
                volume = np.clip(volume, -1000, 400)
                volume = (volume - volume.mean()) / volume.std()  # new arrays, the same axis order
                return torch.from_numpy(np.ascontiguousarray(volume))
        """),
        Invalid("""
            import numpy as np
            import torch

            class ToTensor:
                def __call__(self, sample):
                    sample["image"] = np.transpose(sample["image"], (2, 0, 1))
                    sample["image"] = torch.from_numpy(sample["image"])  # expect: TL302
                    return sample
        """, fixed="""
            import numpy as np
            import torch

            class ToTensor:
                def __call__(self, sample):
                    sample["image"] = np.transpose(sample["image"], (2, 0, 1))
                    sample["image"] = torch.from_numpy(np.ascontiguousarray(sample["image"]))
                    return sample
        """),
        Invalid("""
            import torch

            def to_tensor(array, device):
                return torch.from_numpy(array).to(device)  # expect: TL302

            def prepare(img, device):
                return to_tensor(img, device)  # hands its own parameter on

            def predict(net, img, device):
                img = img.transpose(2, 0, 1)
                return net(prepare(img, device))
        """, fixed="""
            import torch
            import numpy as np

            def to_tensor(array, device):
                return torch.from_numpy(np.ascontiguousarray(array)).to(device)

            def prepare(img, device):
                return to_tensor(img, device)  # hands its own parameter on

            def predict(net, img, device):
                img = img.transpose(2, 0, 1)
                return net(prepare(img, device))
        """),
        Invalid("""
            import numpy as np
            import torch
            def preprocess(image):
                if isinstance(image[0], np.ndarray):
                    image = torch.from_numpy(np.stack(image).transpose(0, 3, 1, 2))  # expect: TL302
                else:
                    image = torch.cat(image)  # joins the tensors of the other branch only
                return image
        """, fixed="""
            import numpy as np
            import torch
            def preprocess(image):
                if isinstance(image[0], np.ndarray):
                    image = torch.from_numpy(np.ascontiguousarray(np.stack(image).transpose(0, 3, 1, 2)))
                else:
                    image = torch.cat(image)  # joins the tensors of the other branch only
                return image
        """),
        Invalid("""
            import numpy as np
            import torch
            t = torch.from_numpy(img.transpose(2, 0, 1))  # expect: TL302
        """, fixed="""
            import numpy as np
            import torch
            t = torch.from_numpy(np.ascontiguousarray(img.transpose(2, 0, 1)))
        """),
        Invalid("""
            import torch

            def to_tensor(img):
                img = img.transpose((2, 0, 1))
                img = img.astype("float32") / 255.0
                return torch.from_numpy(img).float()  # expect: TL302
        """, fixed="""
            import torch
            import numpy as np

            def to_tensor(img):
                img = img.transpose((2, 0, 1))
                img = img.astype("float32") / 255.0
                return torch.from_numpy(np.ascontiguousarray(img)).float()
        """),
        Invalid("""
            import numpy as np
            import torch

            class RandomAffine:
                def apply(self, image):
                    return torch.stack([self.resample(channel) for channel in image])

                def preview(self, channel):
                    return self.resample(channel).unsqueeze(0)  # this caller keeps the layout

                def resample(self, channel):
                    array = np.asarray(channel).transpose()
                    return torch.as_tensor(array)  # expect: TL302
        """, fixed="""
            import numpy as np
            import torch

            class RandomAffine:
                def apply(self, image):
                    return torch.stack([self.resample(channel) for channel in image])

                def preview(self, channel):
                    return self.resample(channel).unsqueeze(0)  # this caller keeps the layout

                def resample(self, channel):
                    array = np.asarray(channel).transpose()
                    return torch.as_tensor(np.ascontiguousarray(array))
        """),
        Invalid("""
            import numpy as np
            import soundfile as sf
            import torch

            def load(image_path, audio_path):
                img = np.load(image_path)
                image = torch.as_tensor(img.transpose(2, 0, 1), dtype=torch.float32)  # expect: TL302
                audio, rate = sf.read(audio_path, always_2d=True)
                return image, torch.tensor(audio.T, dtype=torch.float)  # expect: TL302
        """, fixed="""
            import numpy as np
            import soundfile as sf
            import torch

            def load(image_path, audio_path):
                img = np.load(image_path)
                image = torch.as_tensor(np.ascontiguousarray(img.transpose(2, 0, 1)), dtype=torch.float32)
                audio, rate = sf.read(audio_path, always_2d=True)
                return image, torch.tensor(np.ascontiguousarray(audio.T), dtype=torch.float)
        """),
        Invalid("""
            import numpy as onp
            import torch
            weight = torch.from_numpy(onp.moveaxis(w, -1, 0))  # expect: TL302
            bias = torch.from_numpy(b.T)  # expect: TL302
        """, fixed="""
            import numpy as onp
            import torch
            weight = torch.from_numpy(onp.ascontiguousarray(onp.moveaxis(w, -1, 0)))
            bias = torch.from_numpy(onp.ascontiguousarray(b.T))
        """),
        Invalid("""
            import numpy as np
            import torch

            def hwc_to_chw(img):
                return img.transpose(2, 0, 1)

            class Images:
                def __getitem__(self, index):
                    return torch.from_numpy(hwc_to_chw(self.load(index)))  # expect: TL302
        """, fixed="""
            import numpy as np
            import torch

            def hwc_to_chw(img):
                return img.transpose(2, 0, 1)

            class Images:
                def __getitem__(self, index):
                    return torch.from_numpy(np.ascontiguousarray(hwc_to_chw(self.load(index))))
        """),
    )

    def __init__(self, ctx, sink) -> None:
        super().__init__(ctx, sink)
        # (function, name) -> (the from_numpy call, the expression stored in the name, its fix, the
        # branches it was stored in, the parameter it waits on): reported unless a join on the
        # same path copies the stored tensor later (``s1 = torch.from_numpy(s1)`` ... ``torch.cat([s1, s2])``)
        self._stored: Dict[Tuple[object, str], _Stored] = {}
        # (id of a function of the file, parameter) -> what its calls pass: True for a permuted
        # array, or (the calling function, its parameter) handed on
        self._passed: Dict[Tuple[int, str], Set[Union[bool, Tuple[int, str]]]] = defaultdict(set)
        self._waiting: List[Tuple[Tuple[int, str], cst.Call, tuple]] = []  # from_numpy of a parameter
        self._functions: Dict[int, Scope] = {}  # id of a function's node -> its scope
        # from_numpy calls whose tensor their function returns (id of the call -> id of the function's
        # node), and whether each call of a function of the file joins its result into a new tensor
        # (``transformed.append(self.resample(image))`` ... ``torch.stack(transformed)``)
        self._returned: Dict[int, int] = {}
        self._results_joined: Dict[int, List[Callable[[], bool]]] = defaultdict(list)
        self._returned_reports: List[Tuple[int, cst.Call, tuple]] = []

    def visit_Call(self, node: cst.Call) -> None:
        name = self.ctx.qualname(node.func)
        if name in _JOINS and self._stored:
            self._copied_by_join(node)
        converter = name in _CONVERTERS
        if name != "torch.from_numpy" and not converter:
            self._note_arguments(node)
            return
        if has_star_args(node) or self.ctx.in_test_case():
            return
        args = positional(node)
        if len(args) != 1 or converter and not self._array(args[0].value) or self._made_contiguous(node):
            return
        layout = arriving_layout(self.ctx, args[0].value)
        if layout.kind != PERMUTED and (layout.parameter is None or converter):
            return
        waits_on = None if layout.kind == PERMUTED else self._parameter_key(layout.parameter)
        fix = contiguous_fix(self.ctx, args[0].value)
        stored = self._stored_value(node)
        function = self.ctx.scope.function
        if function.kind == "function" and self._returned_by(node, stored, function.node):
            self._returned[id(node)] = id(function.node)
        if stored is None:
            self._report(node, fix, waits_on)
        else:
            key = (self.ctx.scope.function, stored[0])
            if key in self._stored:  # replaced before any join copied it
                self._report_stored(self._stored.pop(key))
            self._stored[key] = (node, stored[1], fix, self._branches(), waits_on)

    def _parameter_key(self, parameter: str) -> Tuple[int, str]:
        function = self.ctx.scope.function
        self._functions[id(function.node)] = function
        return id(function.node), parameter

    def _note_arguments(self, call: cst.Call) -> None:
        """What a call of one of the file's functions passes: a permuted array, or a parameter
        of the calling function (whose own callers then decide)."""
        func = call.func
        if not isinstance(func, (cst.Name, cst.Attribute)) or self.ctx.in_test_case():
            return
        function = self.ctx.function_here(func)
        if function is None:
            if call.args:
                self._note_arguments_elsewhere(call)
            return
        self._results_joined[id(function)].append(self._result_joined(call))
        for parameter, value in arguments_by_parameter(call, function).items():
            layout = arriving_layout(self.ctx, value)
            if layout.kind == PERMUTED:
                self._passed[id(function), parameter].add(True)
            elif layout.parameter is not None:
                self._passed[id(function), parameter].add(self._parameter_key(layout.parameter))

    def _note_arguments_elsewhere(self, call: cst.Call) -> None:
        """A permuted array passed to a function of another module of the project
        (``to_tensor(img.transpose(2, 0, 1))``): told to that module, by position or keyword."""
        callee = self.ctx.project_callee(call.func)
        if callee is None:
            return
        for position, arg in enumerate(positional(call)):
            if arriving_layout(self.ctx, arg.value).kind == PERMUTED:
                self.ctx.offer(f"{callee}#{position}{_PERMUTED}", "yes")
        for arg in call.args:
            if arg.keyword is not None and arriving_layout(self.ctx, arg.value).kind == PERMUTED:
                self.ctx.offer(f"{callee}#{arg.keyword.value}{_PERMUTED}", "yes")

    def _passed_elsewhere(self, waits_on: Tuple[int, str]) -> bool:
        """Does another module of the project pass a permuted array for this parameter of a
        module-level function?"""
        function = self._functions[waits_on[0]]
        key = self.ctx.function_key(function)
        if key is None:
            return False
        position = parameter_position(function, waits_on[1])
        asked = [f"{key}#{waits_on[1]}{_PERMUTED}"] + ([f"{key}#{position}{_PERMUTED}"] if position is not None else [])
        return any([self.ctx.need(name) == "yes" for name in asked])  # ask for both keys

    def _array(self, node: cst.BaseExpression) -> bool:
        """Is what a constructor that also takes tensors is given a numpy array: on its way back a
        numpy function's result, a transpose of other than two axes (a tensor's takes two),
        ``astype``, or what the file knows is no tensor (``audio, sr = sf.read(path)``)?"""
        assigned: Optional[cst.BaseExpression] = None
        for _ in range(MAX_TRAIL):
            if self.ctx.tensor_kind(node) == NOT:
                return True
            if isinstance(node, cst.Name):
                name = node.value
                node = assigned = self.ctx.value_of(name, assigned) or self.ctx.unpacked_from(name)
            elif isinstance(node, (cst.Subscript, cst.Attribute)):
                node = node.value
            elif isinstance(node, cst.BinaryOperation):
                node = node.left
            elif isinstance(node, cst.Call):
                method = method_call(node)
                if (self.ctx.qualname(node.func) or "").startswith("numpy.") or method is not None and (
                    method.attr.value == "astype" or method.attr.value == "transpose" and len(node.args) != 2
                ):
                    return True
                if method is None:
                    return False
                node = method.value
            else:
                return False
        return False

    def _returned_by(self, call: cst.Call, stored: Optional[Tuple[str, cst.CSTNode]], function: cst.CSTNode) -> bool:
        """Does ``function`` return the tensor ``call`` makes, directly or through the name it is stored in?"""
        if stored is None:
            return isinstance(self.ctx.parent, cst.Return)
        return any(isinstance(node, cst.Return) and is_name(node.value, stored[0]) for node in descendants(function))

    def _result_joined(self, call: cst.Call) -> Callable[[], bool]:
        """Is the result of ``call`` joined into a new tensor: an element of ``torch.stack([...])``, or
        appended to a list the calling function joins, itself or through the name it is stored in
        (``t = self.resample(image)``, ``transformed.append(t)`` ... ``torch.stack(transformed)``)?
        Asked once the file is walked, for the few functions that return a permuted tensor."""
        if self._joined(call, len(self.ctx.ancestors) - 1):
            return lambda: True
        parent = self.ctx.parent
        stored = assigned_name(parent, call) if isinstance(parent, cst.Assign) else None
        return functools.partial(self._collected_for_join, call, stored, self.ctx.scope.function.node)

    def _collected_for_join(self, call: cst.Call, stored: Optional[str], function: cst.CSTNode) -> bool:
        calls = [node for node in descendants(function) if isinstance(node, cst.Call)]
        appends = [
            node for node in calls
            if method_call(node, "append") is not None and isinstance(node.func.value, cst.Name) and len(node.args) == 1
            and (node.args[0].value is call or stored is not None and is_name(node.args[0].value, stored))
        ]
        joined = {
            node.args[0].value.value for node in calls
            if node.args and isinstance(node.args[0].value, cst.Name) and (self.ctx.qualname(node.func) or "") in _JOINS
        }
        return bool(appends) and all(append.func.value.value in joined for append in appends)

    def _report(self, call: cst.Call, fix: tuple, waits_on: Optional[Tuple[int, str]]) -> None:
        if waits_on is not None:
            self._waiting.append((waits_on, call, fix))
        elif id(call) in self._returned:  # decided once every call of its function is seen
            self._returned_reports.append((self._returned[id(call)], call, fix))
        else:
            self._emit(call, fix)

    def _emit(self, call: cst.Call, fix: tuple) -> None:
        converter = dotted_name(call.func)
        message = self.message.replace("torch.from_numpy", converter) if converter != "torch.from_numpy" else None
        self.report(call, message, replacements=fix)

    def _permuted_parameters(self) -> Set[Tuple[int, str]]:
        """The parameters some call passes a permuted array to, directly or handed on."""
        permuted = {key for key, passed in self._passed.items() if True in passed}
        grown = True
        while grown:
            grown = False
            for key, passed in self._passed.items():
                if key not in permuted and not permuted.isdisjoint(passed):
                    permuted.add(key)
                    grown = True
        return permuted

    def _branches(self) -> Dict[int, int]:
        """id() of each ``if`` around the visited node -> id() of the branch it is in."""
        ancestors = self.ctx.ancestors
        return {id(node): id(child) for node, child in zip(ancestors, ancestors[1:]) if isinstance(node, cst.If)}

    def _copied_by_join(self, join: cst.Call) -> None:
        for arg in join.args:
            for element in descendants(arg.value):
                key = (self.ctx.scope.function, element.value) if isinstance(element, cst.Name) else None
                if key not in self._stored or self.ctx.value_of(element.value) is not self._stored[key][1]:
                    continue
                stored_in, here = self._stored[key][3], self._branches()
                if all(here[branch] == path for branch, path in stored_in.items() if branch in here):
                    del self._stored[key]  # not in another branch of an `if` it was stored in

    def leave_Module(self, node: cst.Module) -> None:
        offer_returned_layouts(self.ctx)
        for stored in self._stored.values():
            self._report_stored(stored)
        permuted = self._permuted_parameters() if self._waiting else set()
        for waits_on, call, fix in self._waiting:
            if waits_on in permuted or self._passed_elsewhere(waits_on):
                self.report(call, replacements=fix)
        for function, call, fix in self._returned_reports:
            joined = self._results_joined.get(function)
            if not (joined and all(check() for check in joined)):  # not when every caller stacks what it returns
                self._emit(call, fix)

    def _report_stored(self, stored: _Stored) -> None:
        call, _, fix, _, waits_on = stored
        self._report(call, fix, waits_on)

    def _stored_value(self, call: cst.Call) -> Optional[Tuple[str, cst.CSTNode]]:
        """The name ``call`` (or its chain of views and casts) is stored in, and the stored expression."""
        ancestors = self.ctx.ancestors
        current: cst.CSTNode = call
        for parent in reversed(ancestors):
            if isinstance(parent, cst.Assign):
                stored = assigned_name(parent, current)
                return (stored, current) if stored is not None else None
            if not isinstance(parent, (cst.Attribute, cst.Call)):
                return None
            current = parent
        return None

    def _made_contiguous(self, call: cst.Call) -> bool:
        """Is the tensor made contiguous right after: ``.contiguous()`` in its method chain, a
        join into a new tensor, or a later ``t.contiguous()`` of the name it is stored in?"""
        ancestors = self.ctx.ancestors
        current: cst.CSTNode = call
        index = len(ancestors) - 1
        while index >= 1:
            method = ancestors[index - 1]
            if not (isinstance(ancestors[index], cst.Attribute) and method_call(method) is not None
                    and method.func is ancestors[index] and ancestors[index].value is current):
                break
            name = ancestors[index].attr.value
            if name == "contiguous" or _chooses_layout(method):
                return True
            if name not in _KEEPS_STRIDES:
                return False
            current, index = method, index - 2
        holder = ancestors[index] if index >= 0 else None
        if self._joined(current, index) or _copied_into(holder, ancestors[index - 1] if index >= 1 else None):
            return True
        stored = assigned_name(holder, current)
        return stored is not None and self.ctx.uses_member(stored, _KEEPS_STRIDES | {"contiguous"}) and any(
            _contiguous_chain(node, stored) for node in descendants(self.ctx.scope.function.node)
        )

    def _joined(self, value: cst.CSTNode, index: int) -> bool:
        """Is ``value`` (whose parent is ``ancestors[index]``) an element given to ``torch.stack``/``cat``?"""
        ancestors = self.ctx.ancestors
        for depth in range(index, max(index - 6, -1), -1):
            node = ancestors[depth]
            if isinstance(node, cst.Call):
                return (self.ctx.qualname(node.func) or "") in _JOINS
        return False


def _copied_into(holder: Optional[cst.CSTNode], call: Optional[cst.CSTNode]) -> bool:
    """Is the tensor (whose parent is ``holder``) the source of ``dst.copy_(tensor)``? The copy
    takes the destination's layout (weights loaded into a module's parameters)."""
    return isinstance(holder, cst.Arg) and isinstance(call, cst.Call) and method_call(call, "copy_") is not None \
        and call.args[0] is holder


def _chooses_layout(call: cst.Call) -> bool:
    """``t.to(device, memory_format=torch.channels_last)``: the layout chosen on purpose."""
    return any(arg.keyword is not None and arg.keyword.value == "memory_format" for arg in call.args)


def _contiguous_chain(node: cst.CSTNode, name: str) -> bool:
    """Is ``node`` ``name.contiguous()``, or ``name.float().div(255).contiguous()`` through
    methods that keep the strides (also one choosing the layout)?"""
    method = method_call(node)
    if method is None or not (method.attr.value == "contiguous" or _chooses_layout(node)):
        return False
    base = method.value
    while method_call(base, *_KEEPS_STRIDES) is not None:
        base = base.func.value
    return isinstance(base, cst.Name) and base.value == name
