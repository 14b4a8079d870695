import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def run_cli(tmp_path):
    """Run ``torchlint`` as a real subprocess in ``tmp_path``; returns CompletedProcess."""

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))

    def run(*args, cwd=None, input=None):
        return subprocess.run(
            [sys.executable, "-m", "torchlint", *map(str, args)],
            cwd=cwd or tmp_path, capture_output=True, text=True, input=input, env=env,
        )

    return run
