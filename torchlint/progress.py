"""A progress bar on stderr for long runs, only when a person is watching a terminal."""

from __future__ import annotations

import contextlib
import sys
from typing import Callable, Iterator, Optional

MIN_FILES = 200  # fewer files finish too quickly for a bar to help


@contextlib.contextmanager
def progress_bar(total: int, enabled: bool = True) -> Iterator[Optional[Callable[[int], None]]]:
    """Yields ``advance(n)`` drawing a transient bar on stderr, or None when not shown."""
    if not enabled or total < MIN_FILES or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("linting"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(file=sys.stderr), transient=True) as bar:
        task = bar.add_task("lint", total=total)
        yield lambda done: bar.advance(task, done)
