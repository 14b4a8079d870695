"""The records a lint run produces: diagnostics, fixes and text edits."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Tuple

SAFE = "safe"
UNSAFE = "unsafe"


@dataclass(frozen=True)
class Edit:
    """Replace the text between two (1-based line, 0-based column) positions."""

    start: Tuple[int, int]
    end: Tuple[int, int]
    content: str

    def to_dict(self) -> dict:
        return {
            "start": {"line": self.start[0], "column": self.start[1] + 1},
            "end": {"line": self.end[0], "column": self.end[1] + 1},
            "content": self.content,
        }


@dataclass(frozen=True)
class Fix:
    applicability: str  # SAFE or UNSAFE
    edits: Tuple[Edit, ...]

    def to_dict(self) -> dict:
        return {"applicability": self.applicability, "edits": [e.to_dict() for e in self.edits]}


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One finding. ``line``/``column`` are 1-based, as editors show them."""

    path: str
    line: int
    column: int
    code: str
    message: str = field(compare=False)
    end_line: int = field(default=0, compare=False)
    end_column: int = field(default=0, compare=False)
    fix: Optional[Fix] = field(default=None, compare=False)
    cell: Optional[int] = field(default=None, compare=False)

    def sort_key(self) -> tuple:
        """Report order: by file, then cell (notebooks), line, column and code."""
        return self.path, self.cell or 0, self.line, self.column, self.code

    def to_dict(self) -> dict:
        data = {
            "code": self.code,
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "fix": self.fix.to_dict() if self.fix else None,
        }
        if self.cell is not None:
            data["cell"] = self.cell
        return data
