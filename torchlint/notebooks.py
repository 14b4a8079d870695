"""Jupyter notebooks: the code cells, in order, linted as one program.

IPython syntax (``%magic``, ``!shell``, ``x = !cmd``, ``obj?``) at the start of a logical
line becomes ``pass`` at the same indentation, and a cell that starts with a ``%%`` cell
magic is left out, so every other line keeps its text and its column. A comment line
separates the cells, which lets a fix be mapped back cell by cell: only the cells a fix
changed are rewritten, with their IPython lines restored, and the rest of the notebook's
JSON is written back exactly as it was read.
"""

from __future__ import annotations

import ast
import copy
import difflib
import json
import re
import tokenize
import warnings
from dataclasses import dataclass, field, replace
from typing import Dict, List, Optional, Sequence, Tuple

from torchlint.codes import syntax_error
from torchlint.diagnostics import Diagnostic, Edit, Fix
from torchlint.source import SourceError

NOTEBOOK_SUFFIX = ".ipynb"
SEPARATOR = "# torchlint: next notebook cell\n"
_PLACEHOLDER = "pass"
_ONLY_AST, _TOP_LEVEL_AWAIT = ast.PyCF_ONLY_AST, ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
_SHELL_ASSIGNMENT = re.compile(r"[\w.]+(\s*,\s*[\w.]+)*\s*=\s*[!%]")


def is_notebook(path: str) -> bool:
    return path.endswith(NOTEBOOK_SUFFIX)


@dataclass(frozen=True)
class _Cell:
    index: int  # 0-based position among all the notebook's cells
    source: str  # the cell's source as read
    first_line: int  # 1-based line of the program where the cell starts
    lines: Tuple[str, ...]  # the cell's program lines, each ending in "\n"
    ipython: Dict[int, str]  # 0-based line -> the original IPython line that became ``pass``
    syntax_error: Optional[SyntaxError] = None  # the cell does not parse: its lines are left blank


@dataclass(frozen=True)
class NotebookSource:
    """A notebook read for linting; equal to another read only if the file is unchanged."""

    raw: str
    text: str = field(compare=False)  # the program
    document: dict = field(compare=False, repr=False)
    cells: Tuple[_Cell, ...] = field(compare=False, repr=False)

    def locate(self, diagnostics: Sequence[Diagnostic]) -> List[Diagnostic]:
        """Diagnostics with program lines turned into (cell, line in the cell)."""
        return [self._locate(d) for d in diagnostics]

    def _locate(self, d: Diagnostic) -> Diagnostic:
        cell = self._cell_at(d.line)
        shift = cell.first_line - 1
        fix = d.fix
        if fix is not None:
            edits = tuple(Edit((e.start[0] - shift, e.start[1]), (e.end[0] - shift, e.end[1]), e.content)
                          for e in fix.edits)
            fix = Fix(fix.applicability, edits)
        end_line = d.end_line - shift if d.end_line else d.end_line
        return replace(d, line=d.line - shift, end_line=end_line, fix=fix, cell=cell.index + 1)

    def _cell_at(self, line: int) -> _Cell:
        found = self.cells[0]
        for cell in self.cells:
            if cell.first_line <= line:
                found = cell
        return found

    def cell_syntax_errors(self, path: str) -> List[Diagnostic]:
        """TL001 for each cell that does not parse on its own (left out of the program)."""
        return [
            replace(syntax_error(path, cell.syntax_error.lineno or 1, cell.syntax_error.offset or 1,
                                 cell.syntax_error.msg), cell=cell.index + 1)
            for cell in self.cells if cell.syntax_error is not None
        ]

    def changed_cells(self, text: str) -> List[Tuple[int, str, str]]:
        """(cell number, old source, new source) for each cell that ``text`` changes."""
        pieces = text.split(SEPARATOR)
        if len(pieces) != len(self.cells):
            raise SourceError("cannot map the fixes back to the notebook's cells; not fixed")
        changes = []
        for cell, piece in zip(self.cells, pieces):
            if piece != "".join(cell.lines):
                new = "".join(_restore_ipython(cell, piece))
                if not cell.source.endswith("\n"):
                    new = new[:-1] if new.endswith("\n") else new
                if new != cell.source:
                    changes.append((cell.index + 1, cell.source, new))
        return changes

    def encode(self, text: str) -> bytes:
        """The notebook file with the code cells of ``text``, otherwise exactly as read."""
        document = copy.deepcopy(self.document)
        for number, _, new in self.changed_cells(text):
            cell = document["cells"][number - 1]
            lines = new.splitlines(keepends=True)
            cell["source"] = lines if isinstance(cell.get("source"), list) else new
        return _dump_like(self.raw, self.document, document).encode("utf-8")


def parse_notebook(data: bytes) -> NotebookSource:
    try:
        raw = data.decode("utf-8")
        document = json.loads(raw)
    except UnicodeDecodeError as exc:
        raise SourceError(f"malformed notebook: not UTF-8 (byte {exc.start})") from None
    except ValueError as exc:
        raise SourceError(f"malformed notebook: invalid JSON: {exc}") from None
    except RecursionError:
        raise SourceError("malformed notebook: JSON nested too deeply") from None
    cells = _code_cells(document)
    program: List[str] = []
    built: List[_Cell] = []
    for index, source in cells:
        if built:
            program.append(SEPARATOR)
        lines, ipython = _program_lines(source)
        error = _syntax_error("".join(lines))
        if error is not None:  # lint the other cells; this one is reported and kept out
            lines = ["\n"] * len(lines)
        built.append(_Cell(index, source, len(program) + 1, tuple(lines), ipython, error))
        program.extend(lines)
    return NotebookSource(raw, "".join(program), document, tuple(built))


def _syntax_error(code: str) -> Optional[SyntaxError]:
    """Why a cell does not compile on its own (IPython runs each cell alone, and allows a
    top-level ``await``), or None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(code, "<cell>", "exec", dont_inherit=True, flags=_ONLY_AST | _TOP_LEVEL_AWAIT)
    except SyntaxError as exc:
        return exc
    except (ValueError, RecursionError, MemoryError):
        return None  # not a syntax error: the whole program's parse reports it
    return None


def _code_cells(document: object) -> List[Tuple[int, str]]:
    if not isinstance(document, dict) or not isinstance(document.get("cells"), list):
        raise SourceError("malformed notebook: no list of cells (nbformat 4 is required)")
    if _language(document) not in (None, "python"):
        return []
    cells = []
    for index, cell in enumerate(document["cells"]):
        if not isinstance(cell, dict):
            raise SourceError(f"malformed notebook: cell {index + 1} is not an object")
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise SourceError(f"malformed notebook: cell {index + 1} has no text source")
        if not source.lstrip().startswith("%%"):  # a cell magic: not Python
            cells.append((index, source))
    return cells


def _language(document: dict) -> Optional[str]:
    info = document.get("metadata", {})
    info = info.get("language_info", {}) if isinstance(info, dict) else {}
    name = info.get("name") if isinstance(info, dict) else None
    return name.lower() if isinstance(name, str) else None


def _is_ipython(line: str) -> bool:
    stripped = line.strip()
    return (stripped.startswith(("%", "!", "?")) or (stripped.endswith("?") and "#" not in stripped)
            or _SHELL_ASSIGNMENT.match(stripped) is not None)


def _program_lines(source: str) -> Tuple[List[str], Dict[int, str]]:
    """The cell's lines with IPython lines at the start of a logical line made ``pass``."""
    lines = [line if line.endswith("\n") else line + "\n" for line in source.splitlines(keepends=True)]
    ipython: Dict[int, str] = {}
    state = {"depth": 0, "start": True}
    position = iter(range(len(lines)))

    def readline() -> str:
        number = next(position, None)
        if number is None:
            return ""
        line = lines[number]
        if state["start"] and state["depth"] == 0 and _is_ipython(line):
            ipython[number] = line
            lines[number] = line[: len(line) - len(line.lstrip())] + _PLACEHOLDER + "\n"
        return lines[number]

    try:
        for token in tokenize.generate_tokens(readline):
            if token.type in (tokenize.NEWLINE, tokenize.NL):
                state["start"] = state["depth"] == 0
            elif token.type not in (tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
                state["start"] = False
                if token.string in "([{" and token.type == tokenize.OP:
                    state["depth"] += 1
                elif token.string in ")]}" and token.type == tokenize.OP:
                    state["depth"] = max(0, state["depth"] - 1)
    except (tokenize.TokenError, SyntaxError):
        pass  # the rest is linted as it is; the parser reports what does not parse
    return lines, ipython


def _restore_ipython(cell: _Cell, piece: str) -> List[str]:
    """The fixed cell's lines, each IPython placeholder put back to its original line."""
    new_lines = piece.splitlines(keepends=True)
    if not cell.ipython:
        return new_lines
    matcher = difflib.SequenceMatcher(None, list(cell.lines), new_lines, autojunk=False)
    moved: Dict[int, str] = {}
    for tag, old_start, old_end, new_start, _ in matcher.get_opcodes():
        if tag == "equal":
            for offset in range(old_end - old_start):
                if old_start + offset in cell.ipython:
                    moved[new_start + offset] = cell.ipython[old_start + offset]
    if len(moved) != len(cell.ipython):
        raise SourceError(f"a fix would change an IPython line in cell {cell.index + 1}; not fixed")
    return [moved.get(number, line) for number, line in enumerate(new_lines)]


def _dump_like(raw: str, original: dict, document: dict) -> str:
    """Serialise ``document`` in the layout ``raw`` was written in; refuse if unknown."""
    lines = raw.split("\n", 2)
    indent = len(lines[1]) - len(lines[1].lstrip(" ")) if len(lines) > 1 else None
    for ensure_ascii in (False, True):
        if _dump(original, indent, ensure_ascii, raw) == raw:
            return _dump(document, indent, ensure_ascii, raw)
    raise SourceError("cannot fix: the notebook's JSON layout is not one json.dump writes; not fixed")


def _dump(document: dict, indent: Optional[int], ensure_ascii: bool, raw: str) -> str:
    text = json.dumps(document, indent=indent, ensure_ascii=ensure_ascii)
    return text + "\n" if raw.endswith("\n") else text
