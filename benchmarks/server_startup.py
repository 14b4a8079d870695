"""How long ``torchlint server`` takes to answer ``initialize``, and then to publish the
diagnostics of a file it is sent, each in a fresh process.

    python benchmarks/server_startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import BinaryIO, List, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = "import torch\nx = torch.zeros(3).cuda()\n"


def send(stream: BinaryIO, message: dict) -> None:
    body = json.dumps(dict(message, jsonrpc="2.0")).encode()
    stream.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stream.flush()


def receive(stream: BinaryIO) -> dict:
    length = 0
    while True:
        line = stream.readline().strip()
        if not line:
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(stream.read(length))


def one_run() -> Tuple[float, float]:
    """Seconds from starting the process to the answer to ``initialize``, and to the first
    diagnostics of a document opened right after."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    start = time.perf_counter()
    server = subprocess.Popen([sys.executable, "-m", "torchlint", "server"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, env=env)
    try:
        send(server.stdin, {"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None,
                                                                         "capabilities": {}}})
        while receive(server.stdout).get("id") != 1:
            pass
        initialized = time.perf_counter() - start
        send(server.stdin, {"method": "initialized", "params": {}})
        send(server.stdin, {"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": "file:///tmp/startup.py", "languageId": "python", "version": 1, "text": SOURCE}}})
        while receive(server.stdout).get("method") != "textDocument/publishDiagnostics":
            pass
        return initialized, time.perf_counter() - start
    finally:
        server.kill()
        server.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    runs: List[Tuple[float, float]] = [one_run() for _ in range(parser.parse_args().runs)]
    for label, values in (("initialize answered", [r[0] for r in runs]), ("first diagnostics", [r[1] for r in runs])):
        print(f"{label}: median {statistics.median(values):.2f} s, max {max(values):.2f} s over {len(values)} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
