"""Reading and writing Python source files without losing encoding, BOM or newlines."""

from __future__ import annotations

import io
import os
import tempfile
import tokenize
from dataclasses import dataclass


class SourceError(Exception):
    """A file that cannot be read or decoded; the message is one line for the user."""


@dataclass(frozen=True)
class SourceText:
    text: str
    encoding: str  # a codec name; "utf-8-sig" keeps a BOM on write

    def encode(self, text: str) -> bytes:
        return text.encode(self.encoding)


def decode(data: bytes) -> SourceText:
    """Decode bytes the way Python does: BOM, then a PEP 263 coding cookie, then UTF-8."""
    if b"\x00" in data:
        raise SourceError("contains NUL bytes (binary file?)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except SyntaxError as exc:
        raise SourceError(f"cannot decode: not UTF-8 and no valid coding declaration ({exc})") from None
    except LookupError as exc:
        raise SourceError(f"cannot decode: {exc}") from None
    except UnicodeDecodeError as exc:
        raise SourceError(f"cannot decode as {exc.encoding}: byte {exc.start}: {exc.reason}") from None
    return SourceText(text, encoding)


def read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise SourceError(exc.strerror or str(exc)) from None


def read_source(path: str) -> SourceText:
    return decode(read_bytes(path))


def write_atomic(path: str, data: bytes, durable: bool = True) -> None:
    """Write ``data`` to a temporary file beside ``path`` and rename it over ``path``.

    The original's permission bits are kept (a new file is private to the user); a crash
    leaves either the old or the new file; ``durable`` also syncs it to disk first.
    """
    directory = os.path.dirname(os.path.abspath(path))
    try:
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o600
    fd, tmp = tempfile.mkstemp(prefix=".torchlint-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
