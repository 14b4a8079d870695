"""Per-file lint results kept between runs, so an unchanged file is not linted again.

One JSON entry per (path, configuration) under the cache directory; the entry holds the
key it was computed for: the file's content hash, torchlint's version and code, and the
effective configuration. A mismatching, unreadable or corrupt entry is a miss. Problems
with the cache never fail a run: the first one becomes a single warning line and the
run goes on (without writing, if the directory is unwritable).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
from typing import Dict, List, Optional

import torchlint
from torchlint.config import Settings
from torchlint.diagnostics import Diagnostic, Edit, Fix
from torchlint.project import ProjectFacts
from torchlint.source import write_atomic

DEFAULT_DIRECTORY = ".torchlint_cache"
_TAG_NAME = "CACHEDIR.TAG"
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This directory is torchlint's cache.\n"
_FORMAT = 2


def default_directory(settings: Settings) -> str:
    """``.torchlint_cache`` beside the pyproject.toml in use, else in the working directory."""
    root = os.path.dirname(settings.source) if settings.source else os.getcwd()
    return os.path.join(root, DEFAULT_DIRECTORY)


def code_fingerprint() -> str:
    """torchlint's version plus the size and mtime of its modules (so edits invalidate too)."""
    package = os.path.dirname(os.path.abspath(torchlint.__file__))
    parts = [torchlint.__version__]
    for directory, subdirs, names in os.walk(package):
        subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
        for name in sorted(n for n in names if n.endswith(".py")):
            stat = os.stat(os.path.join(directory, name))
            parts.append(f"{os.path.relpath(os.path.join(directory, name), package)}:{stat.st_size}:{stat.st_mtime_ns}")
    return _digest("\n".join(parts).encode())


def settings_fingerprint(settings: Settings) -> str:
    """The effective configuration, independent of set order and hash seeds."""
    return _digest(json.dumps(_canonical(dataclasses.asdict(settings)), sort_keys=True).encode())


def _canonical(value):
    if isinstance(value, dict):
        return {key: _canonical(item) for key, item in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted(_canonical(item) for item in value)
    if isinstance(value, (list, tuple)):
        return [_canonical(item) for item in value]
    return value


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def content_key(data: bytes) -> str:
    return _digest(data)


class Cache:
    def __init__(self, directory: str, settings: Settings, code: Optional[str] = None) -> None:
        self.directory = directory
        self.warnings: List[str] = []
        self._writable = True
        self._config = f"{code or code_fingerprint()}:{settings_fingerprint(settings)}"

    def _entry_path(self, path: str) -> str:
        name = _digest(f"{os.path.abspath(path)}\0{self._config}".encode())
        return os.path.join(self.directory, "entries", name[:2], name + ".json")

    def load(self, path: str, key: str) -> Optional[dict]:
        """The stored outcome fields for ``path`` if computed for content ``key``, else None."""
        entry_path = self._entry_path(path)
        try:
            with open(entry_path, "rb") as handle:
                entry = json.loads(handle.read())
            if entry["format"] != _FORMAT or entry["path"] != path:
                return None
            if entry["key"] != key:
                return None
            return {"diagnostics": [decode_diagnostic(d) for d in entry["diagnostics"]],
                    "errors": [str(e) for e in entry["errors"]], "project": _decode_project(entry["project"])}
        except (FileNotFoundError, NotADirectoryError):
            return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            self._warn(f"ignoring unreadable cache entry {entry_path} ({type(exc).__name__})")
            return None

    def store(
        self, path: str, key: str, diagnostics: List[Diagnostic], errors: List[str], project: ProjectFacts,
    ) -> None:
        if not self._writable:
            return
        entry = {"format": _FORMAT, "path": path, "key": key,
                 "diagnostics": [encode_diagnostic(d) for d in diagnostics], "errors": errors,
                 "project": _encode_project(project)}
        entry_path = self._entry_path(path)
        try:
            self._prepare(os.path.dirname(entry_path))
            write_atomic(entry_path, json.dumps(entry, separators=(",", ":")).encode(), durable=False)
        except OSError as exc:
            self._writable = False
            self._warn(f"cannot write the cache in {self.directory} ({exc.strerror or exc}); not caching")

    def _prepare(self, entry_directory: str) -> None:
        if not os.path.isdir(entry_directory):
            os.makedirs(entry_directory, exist_ok=True)
        tag = os.path.join(self.directory, _TAG_NAME)
        if not os.path.exists(tag):
            with open(tag, "w") as handle:
                handle.write(_TAG)
            with open(os.path.join(self.directory, ".gitignore"), "w") as handle:
                handle.write("*\n")

    def _warn(self, message: str) -> None:
        if not self.warnings:
            self.warnings.append(message)


def clean(directory: str) -> str:
    """Remove a torchlint cache directory; returns a one-line report. Refuses other directories."""
    if not os.path.lexists(directory):
        return f"no cache at {directory}"
    tag = os.path.join(directory, _TAG_NAME)
    try:
        with open(tag) as handle:
            is_ours = handle.read() == _TAG
    except OSError:
        is_ours = False
    if not is_ours or os.path.islink(directory):
        raise OSError(f"{directory} is not a torchlint cache (no {_TAG_NAME}); not removed")
    shutil.rmtree(directory)
    return f"removed {directory}"


def encode_diagnostic(diagnostic: Diagnostic) -> Dict[str, object]:
    return dataclasses.asdict(diagnostic)


def decode_diagnostic(data: Dict[str, object]) -> Diagnostic:
    fix = data.get("fix")
    if fix is not None:
        edits = tuple(Edit(tuple(e["start"]), tuple(e["end"]), e["content"]) for e in fix["edits"])
        fix = Fix(fix["applicability"], edits)
    return Diagnostic(**{**data, "fix": fix})


def _encode_project(project: ProjectFacts) -> Dict[str, object]:
    return dataclasses.asdict(project)


def _decode_project(data: Dict[str, object]) -> ProjectFacts:
    return ProjectFacts(
        hot_calls=[(str(target), str(kind)) for target, kind in data["hot_calls"]],
        calls={str(caller): [str(callee) for callee in callees] for caller, callees in data["calls"].items()},
        waiting=[(str(name), str(local), tuple(str(kind) for kind in kinds)) for name, local, kinds in data["waiting"]],
        offers={str(key): str(value) for key, value in data["offers"].items()},
        needs=[str(key) for key in data["needs"]],
        reexports={str(name): str(target) for name, target in data["reexports"].items()},
        classes={
            str(cls): ([str(base) for base in bases], [str(method) for method in methods])
            for cls, (bases, methods) in data["classes"].items()
        },
    )
