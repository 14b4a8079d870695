"""Pinned real-world code from PyPI: archives downloaded hash-checked, their ``.py`` files unpacked.

``python benchmarks/corpus.py [--cache DIR]`` downloads and unpacks the speed corpus (four
wheels) and prints where the sources are. ``--wheels DIR`` uses archives already on disk
instead of downloading them; they are checked against the same hashes. The accuracy
benchmark (``accuracy.py``) pins its own packages and uses the same functions.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from typing import List, NamedTuple, Optional, Sequence


class Pin(NamedTuple):
    requirement: str  # name==version
    filename: str  # the archive pip downloads for it (a wheel, or an sdist when there is none)
    sha256: str


# The speed corpus.
PINS = (
    Pin("timm==1.0.31", "timm-1.0.31-py3-none-any.whl",
        "5bd50f7d0fe6d09bf9285ac2523234a1b7e6bf075c0be3e7aed09139fcb617c7"),
    Pin("pytorch-lightning==2.6.6", "pytorch_lightning-2.6.6-py3-none-any.whl",
        "71f95c7b22f25c4f91cc659e1734bcdc6c69c8b66543f2ed2d78dbe29ce2f167"),
    Pin("torchmetrics==1.9.0", "torchmetrics-1.9.0-py3-none-any.whl",
        "bfdcbff3dd1d96b3374bb2496eb39f23c4b28b8a845b6a18c313688e0d2d9ca1"),
    Pin("accelerate==1.15.0", "accelerate-1.15.0-py3-none-any.whl",
        "97eacca0b73e45cb867dbf8c5d5d4dc32219544300e0c8992c7334dc2ef33cec"),
)
DEFAULT_CACHE = os.path.join(os.path.expanduser("~"), ".cache", "torchlint-bench")


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch(pins: Sequence[Pin], directory: str, local: Optional[str] = None) -> List[str]:
    """The pinned archives in ``directory``: copied from ``local`` or downloaded with pip
    (``--require-hashes``) when missing, then checked against their hashes."""
    os.makedirs(directory, exist_ok=True)
    missing = [pin for pin in pins if not os.path.exists(os.path.join(directory, pin.filename))]
    if missing and local:
        for pin in missing:
            shutil.copyfile(os.path.join(local, pin.filename), os.path.join(directory, pin.filename))
    elif missing:
        requirements = os.path.join(directory, "requirements.txt")
        with open(requirements, "w") as handle:
            handle.writelines(f"{pin.requirement} --hash=sha256:{pin.sha256}\n" for pin in missing)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-build-isolation",
             "--require-hashes", "-d", directory, "-r", requirements],
            check=True,
        )
    archives = []
    for pin in pins:
        path = os.path.join(directory, pin.filename)
        actual = _sha256(path)
        if actual != pin.sha256:
            raise SystemExit(f"{path}: sha256 {actual} does not match the pinned {pin.sha256}")
        archives.append(path)
    return archives


def unpack(archive: str, destination: str) -> None:
    """Extract the ``.py`` files of a wheel, or of an sdist without its top-level folder."""
    if archive.endswith(".whl"):
        with zipfile.ZipFile(archive) as wheel:
            for member in wheel.namelist():
                if member.endswith(".py"):
                    wheel.extract(member, destination)
        return
    with tarfile.open(archive) as sdist:
        for member in sdist.getmembers():
            top, _, inner = member.name.partition("/")
            if member.isfile() and inner.endswith(".py"):
                member.name = inner
                sdist.extract(member, destination, filter="data")


def ensure_corpus(cache: str = DEFAULT_CACHE, local: Optional[str] = None) -> str:
    """The directory holding the unpacked ``.py`` files of the speed corpus."""
    source = os.path.join(cache, "src")
    marker = os.path.join(source, ".complete")
    if os.path.exists(marker):
        return source
    for archive in fetch(PINS, os.path.join(cache, "wheels"), local):
        unpack(archive, source)
    open(marker, "w").close()
    return source


def python_files(root: str) -> List[str]:
    return sorted(
        os.path.join(directory, name)
        for directory, _, names in os.walk(root)
        for name in names
        if name.endswith(".py")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", default=DEFAULT_CACHE, help="where archives and sources are kept")
    parser.add_argument("--wheels", help="a directory that already holds the pinned archives")
    args = parser.parse_args()
    print(ensure_corpus(args.cache, args.wheels))


if __name__ == "__main__":
    main()
