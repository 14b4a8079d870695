"""``[tool.torchlint]`` in pyproject.toml, and rule selection."""

from __future__ import annotations

import fnmatch
import os
import sys
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterable, List, Optional, Tuple

from torchlint.codes import ENGINE_CODES, preview_codes

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class ConfigError(Exception):
    """A usage or configuration problem; the message is one line and names the culprit."""


OPT_IN = frozenset(code for code, info in ENGINE_CODES.items() if info.opt_in)


@dataclass(frozen=True)
class Settings:
    select: Tuple[str, ...] = ("TL",)
    extend_select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    exclude: Tuple[str, ...] = ()
    hot_functions: FrozenSet[str] = frozenset()
    preview: bool = False  # rules in preview are reported only when this is on
    root: str = field(default=".", compare=False)
    source: Optional[str] = field(default=None, compare=False)  # the pyproject.toml used

    def enabled(self, code: str, path: Optional[str] = None) -> bool:
        """ruff's rule: the most specific matching selector wins; ties go to ignore. An
        opt-in code (TL003) counts as selected only where its full code is; a rule in preview
        only in preview mode, as in ruff."""
        if not self.preview and code in preview_codes():
            return False
        selectors = self.select + self.extend_select
        if code in OPT_IN:
            selectors = tuple(selector for selector in selectors if selector == code)
        selected = _longest_prefix(code, selectors)
        ignored = _longest_prefix(code, self.ignore + self.ignored_for(path))
        return selected > ignored

    def ignored_for(self, path: Optional[str]) -> Tuple[str, ...]:
        if path is None or not self.per_file_ignores:
            return ()
        relative = self.relative(path)
        codes: List[str] = []
        for pattern, ignored in self.per_file_ignores:
            if matches(relative, pattern):
                codes.extend(ignored)
        return tuple(codes)

    def is_excluded(self, path: str) -> bool:
        relative = self.relative(path)
        return any(matches(relative, pattern) for pattern in self.exclude)

    def relative(self, path: str) -> str:
        relative = os.path.relpath(os.path.abspath(path), os.path.abspath(self.root))
        return relative.replace(os.sep, "/")


def matches(relative: str, pattern: str) -> bool:
    """A glob against the whole relative path, or against any one of its parts."""
    pattern = pattern.rstrip("/")
    if fnmatch.fnmatchcase(relative, pattern) or fnmatch.fnmatchcase(relative, pattern + "/*"):
        return True
    return "/" not in pattern and any(fnmatch.fnmatchcase(part, pattern) for part in relative.split("/"))


def _longest_prefix(code: str, selectors: Iterable[str]) -> int:
    return max((len(s) for s in selectors if code.startswith(s)), default=0)


def check_selectors(selectors: Iterable[str], known: Iterable[str], where: str) -> None:
    codes = list(known)
    for selector in selectors:
        if not any(code.startswith(selector) for code in codes):
            raise ConfigError(f"{where}: unknown rule code or prefix '{selector}'")


def find_pyproject(start: str) -> Optional[str]:
    directory = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    while True:
        candidate = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


_LIST_KEYS = {"select": "select", "extend-select": "extend_select", "ignore": "ignore",
              "exclude": "exclude", "hot-functions": "hot_functions"}


def load_settings(pyproject: Optional[str], known_codes: Iterable[str]) -> Settings:
    """Settings from ``pyproject`` (None: defaults). Raises ConfigError naming file and key."""
    if pyproject is None:
        return Settings()
    try:
        with open(pyproject, "rb") as handle:
            document = tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"{pyproject}: cannot read: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{pyproject}: invalid TOML: {exc}") from None
    table = document.get("tool", {}).get("torchlint", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.torchlint] must be a table")
    values: Dict[str, object] = {}
    known = list(known_codes)
    for key, value in table.items():
        where = f"{pyproject}: [tool.torchlint] {key}"
        if key in _LIST_KEYS:
            values[_LIST_KEYS[key]] = _string_list(value, where)
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: expected a table of glob = [codes]")
            values["per_file_ignores"] = tuple(
                (pattern, _string_list(codes, f"{where}.{pattern}")) for pattern, codes in value.items()
            )
            for pattern, codes in values["per_file_ignores"]:
                check_selectors(codes, known, f"{where}.{pattern}")
        elif key == "preview":
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: expected true or false, got {value!r}")
            values["preview"] = value
        else:
            raise ConfigError(f"{pyproject}: [tool.torchlint]: unknown key '{key}'")
        if key in ("select", "extend-select", "ignore"):
            check_selectors(values[_LIST_KEYS[key]], known, where)
    if "hot_functions" in values:
        values["hot_functions"] = frozenset(values["hot_functions"])
    return Settings(root=os.path.dirname(pyproject), source=pyproject, **values)


def _string_list(value: object, where: str) -> Tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: expected a list of strings, got {value!r}")
    return tuple(value)
