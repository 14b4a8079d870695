"""``torchlint --watch``: check, then check again whenever a source file or pyproject.toml
changes (with ``watchfiles``, which uses the operating system's file events)."""

from __future__ import annotations

import sys
import time
from typing import Callable, List

from torchlint.config import ConfigError
from torchlint.discovery import SKIPPED_DIRECTORIES, SOURCE_SUFFIXES
from torchlint.usage import EXIT_CLEAN


def _relevant(change: object, path: str) -> bool:
    parts = path.replace("\\", "/").split("/")
    if any(part in SKIPPED_DIRECTORIES for part in parts[:-1]):
        return False
    return parts[-1].endswith(SOURCE_SUFFIXES) or parts[-1] == "pyproject.toml"


def watch(paths: List[str], check: Callable[[], int]) -> int:
    """Run ``check`` now and after every batch of changes under ``paths``, until interrupted."""
    try:
        import watchfiles
    except ImportError:
        raise ConfigError("--watch needs watchfiles: pip install 'torchlint[watch]'") from None
    _announce("Starting torchlint in watch mode...")
    check()
    _announce("Watching for file changes.")
    try:
        for _ in watchfiles.watch(*paths, watch_filter=_relevant, raise_interrupt=False):
            _announce("File change detected...")
            check()
            _announce("Watching for file changes.")
    except KeyboardInterrupt:
        pass
    return EXIT_CLEAN


def _announce(message: str) -> None:
    sys.stdout.write(f"[{time.strftime('%H:%M:%S')}] {message}\n")
    sys.stdout.flush()
