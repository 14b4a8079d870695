"""Where TL302's effect comes from on a GPU: the host copy, or the kernels the input's layout picks.

Uses the TL302 fixture's workload (a small ResNet-style net trained on HWC image batches) and
times, with CUDA events, three things separately at the fixture's full size:

* ``host copy``: ``np.ascontiguousarray`` of the transposed batch (what the fix adds);
* ``to device``: ``.to(device)`` of the strided and of the contiguous tensor;
* ``train step``: one training step on an input already on the device, strided like
  ``channels_last`` (what ``from_numpy(hwc.transpose(...))`` gives) and contiguous, in fp32 and
  under autocast, and which memory format the network's activations end up in.

Run on a machine with CUDA: ``python benchmarks/input_layout.py`` (prints a Markdown table).
"""

import os
import statistics
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "torchlint", "bench", "fixtures", "TL302"))
import workload  # noqa: E402

REPEATS = 30


def cuda_time(function, repeats: int = REPEATS) -> float:
    """Median seconds of ``function`` over ``repeats`` calls after three warm-up calls."""
    for _ in range(3):
        function()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        function()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def main() -> None:
    device = torch.device("cuda")
    state = workload.setup(device, "full", "fp32")
    transposed = state["images"].transpose(0, 3, 1, 2)
    strided, contiguous = torch.from_numpy(transposed), torch.from_numpy(np.ascontiguousarray(transposed))
    print(f"{torch.cuda.get_device_name(device)}, torch {torch.__version__}, CUDA {torch.version.cuda}, "
          f"cuDNN {torch.backends.cudnn.version()}\n")
    print("| what | strided (before) | contiguous (after) |\n|---|---:|---:|")
    print(f"| host copy (`np.ascontiguousarray`) | – | {cuda_time(lambda: np.ascontiguousarray(transposed)) * 1e3:.2f} ms |")
    print(f"| `.to(device)` | {cuda_time(lambda: strided.to(device)) * 1e3:.2f} ms | "
          f"{cuda_time(lambda: contiguous.to(device)) * 1e3:.2f} ms |")
    for mode in workload.MODES:
        times, formats = [], []
        for batch in (strided, contiguous):
            state = workload.setup(device, "full", mode)
            on_device = batch.to(device)
            times.append(cuda_time(lambda: workload.train_step(state, on_device)))
            first_conv = state["net"][0](on_device.float())
            formats.append("channels_last" if first_conv.is_contiguous(memory_format=torch.channels_last)
                           and not first_conv.is_contiguous() else "contiguous")
        print(f"| train step, {mode}, input on device | {times[0] * 1e3:.2f} ms ({formats[0]}) | "
              f"{times[1] * 1e3:.2f} ms ({formats[1]}) |")


if __name__ == "__main__":
    main()
