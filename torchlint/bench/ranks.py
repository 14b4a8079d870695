"""Fixture code in processes of its own: one per device for a fix that is
``DistributedDataParallel`` (TL401), or one per side where a setting is process-wide and
cached (TL802: ``cudnn.benchmark`` and cuDNN's plans).

``Ranks(path, world, device_type, size)`` spawns ``world`` processes. Each loads the
module at ``path`` (spawned processes cannot import the harness's fixture modules by name;
its folder goes on ``sys.path``, so ``import workload`` finds the fixture's), joins a process group (NCCL on CUDA, Gloo on the CPU), calls
``rank_setup(rank, world, device, size)`` once and then ``rank_step(state)`` for every
``Ranks.step()``, which returns rank 0's output. The processes stop when the ``Ranks`` is
garbage collected or the harness exits.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import sys
import weakref
from typing import Any, List

import torch
import torch.multiprocessing as multiprocessing

START_SECONDS = 300  # spawning a process imports torch again, and NCCL set-up is slow
STEP_SECONDS = 600


class Ranks:
    def __init__(self, path: str, world: int, device_type: str, size: str) -> None:
        context = multiprocessing.get_context("spawn")
        self.commands = [context.Queue() for _ in range(world)]
        self.results = context.Queue()
        port = _free_port()
        self.processes = [
            context.Process(target=_rank_main, args=(path, rank, world, device_type, size, port,
                                                    self.commands[rank], self.results), daemon=True)
            for rank in range(world)
        ]
        for process in self.processes:
            process.start()
        weakref.finalize(self, _stop, self.commands, self.processes)
        self._collect(START_SECONDS)

    def step(self) -> Any:
        for commands in self.commands:
            commands.put("step")
        return self._collect(STEP_SECONDS)

    def _collect(self, timeout: float) -> Any:
        """Every rank's answer; rank 0's output, or the first rank's error raised here."""
        answers = sorted(self.results.get(timeout=timeout) for _ in self.processes)
        errors = [error for _, error, _ in answers if error]
        if errors:
            raise RuntimeError(errors[0])
        return answers[0][2]


def _rank_main(path, rank, world, device_type, size, port, commands, results) -> None:
    try:
        sys.path.insert(0, os.path.dirname(path))
        spec = importlib.util.spec_from_file_location("torchlint_rank_module", path)
        workload = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(workload)
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        cuda = device_type == "cuda"
        if cuda:
            torch.cuda.set_device(rank)
        torch.distributed.init_process_group("nccl" if cuda else "gloo", rank=rank, world_size=world)
        device = torch.device("cuda", rank) if cuda else torch.device("cpu")
        state = workload.rank_setup(rank, world, device, size)
        results.put((rank, None, None))
    except Exception as error:  # reported by the parent, which is waiting for every rank
        results.put((rank, f"rank {rank} set-up raised {type(error).__name__}: {error}", None))
        return
    while commands.get() is not None:
        try:
            output = workload.rank_step(state)
            results.put((rank, None, output if rank == 0 else None))
        except Exception as error:
            results.put((rank, f"rank {rank} step raised {type(error).__name__}: {error}", None))
    torch.distributed.destroy_process_group()


def _stop(commands: List, processes: List) -> None:
    for queue in commands:
        queue.put(None)
    for process in processes:
        process.join(timeout=10)
        if process.is_alive():
            process.kill()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
