"""Which files to lint: walk directories, skip what never holds user code."""

from __future__ import annotations

import os
from typing import Iterable, List, Tuple

from torchlint.config import Settings

SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")
SKIPPED_DIRECTORIES = frozenset(
    {".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__", "build", "dist",
     "node_modules", ".eggs", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".torchlint_cache",
     "site-packages", ".ipynb_checkpoints"}
)


def discover(paths: Iterable[str], settings: Settings) -> Tuple[List[str], List[Tuple[str, str]]]:
    """Files to lint (sorted, unique), and (path, problem) for each path that cannot be linted.

    A file named explicitly is linted whatever its suffix, unless excluded. Directory
    symlinks are not followed, so a symlink loop cannot trap the walk.
    """
    files, errors = set(), []
    for path in paths:
        if os.path.isfile(path):
            if not settings.is_excluded(path):
                files.add(os.path.normpath(path))
        elif os.path.isdir(path):
            files.update(_walk(path, settings))
        elif os.path.lexists(path):
            errors.append((path, "not a regular file or directory"))
        else:
            errors.append((path, "no such file or directory"))
    return sorted(files), errors


def _walk(root: str, settings: Settings) -> Iterable[str]:
    for directory, subdirs, names in os.walk(root):
        subdirs[:] = sorted(
            d for d in subdirs
            if d not in SKIPPED_DIRECTORIES and not d.endswith(".egg-info")
            and not settings.is_excluded(os.path.join(directory, d))
        )
        for name in names:
            if name.endswith(SOURCE_SUFFIXES):
                path = os.path.normpath(os.path.join(directory, name))
                if not settings.is_excluded(path):
                    yield path
