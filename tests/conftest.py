import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def run_cli(tmp_path):
    """Run ``torchlint`` as a real subprocess in ``tmp_path``; returns CompletedProcess."""

    env = checkout_env()

    def run(*args, cwd=None, input=None):
        return subprocess.run(
            [sys.executable, "-m", "torchlint", *map(str, args)],
            cwd=cwd or tmp_path, capture_output=True, text=True, input=input, env=env,
        )

    return run


def checkout_env():
    """The environment for subprocesses: this checkout's torchlint comes first on the path."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))


FLAKE8_ENTRY_POINT = "torchlint.flake8_plugin:Plugin"


def require_flake8_entry_point():
    """flake8 finds plugins through installed metadata: fail (not skip) when it is missing."""
    from importlib.metadata import entry_points

    found = {ep.name: ep.value for ep in entry_points(group="flake8.extension")}
    assert found.get("TL") == FLAKE8_ENTRY_POINT, (
        "torchlint's flake8 entry point is not registered in this environment "
        f"(found {found.get('TL')!r}); install the checkout: pip install -e \".[test]\""
    )


@pytest.fixture
def run_flake8(tmp_path):
    """Run the real ``flake8`` as a subprocess in ``tmp_path`` (config files ignored)."""
    require_flake8_entry_point()

    def run(*args, cwd=None, isolated=True):
        flags = ["--isolated"] if isolated else []
        return subprocess.run(
            [sys.executable, "-m", "flake8", *flags, *map(str, args)],
            cwd=cwd or tmp_path, capture_output=True, text=True, env=checkout_env(),
        )

    return run
