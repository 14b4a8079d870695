"""The pinned real-world corpus the benchmarks run on: four wheels from PyPI, unpacked.

``python benchmarks/corpus.py [--cache DIR]`` downloads (hash-checked) and unpacks it and
prints where the sources are. ``--wheels DIR`` uses wheels already on disk instead of
downloading them; they are checked against the same hashes.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import zipfile
from typing import List, Optional

# (requirement, wheel file name, sha256 of the wheel)
PINS = (
    ("timm==1.0.31", "timm-1.0.31-py3-none-any.whl",
     "5bd50f7d0fe6d09bf9285ac2523234a1b7e6bf075c0be3e7aed09139fcb617c7"),
    ("pytorch-lightning==2.6.6", "pytorch_lightning-2.6.6-py3-none-any.whl",
     "71f95c7b22f25c4f91cc659e1734bcdc6c69c8b66543f2ed2d78dbe29ce2f167"),
    ("torchmetrics==1.9.0", "torchmetrics-1.9.0-py3-none-any.whl",
     "bfdcbff3dd1d96b3374bb2496eb39f23c4b28b8a845b6a18c313688e0d2d9ca1"),
    ("accelerate==1.15.0", "accelerate-1.15.0-py3-none-any.whl",
     "97eacca0b73e45cb867dbf8c5d5d4dc32219544300e0c8992c7334dc2ef33cec"),
)
DEFAULT_CACHE = os.path.join(os.path.expanduser("~"), ".cache", "torchlint-bench")


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_wheels(directory: str, local: Optional[str] = None) -> List[str]:
    """The four wheels in ``directory``, downloaded with ``pip --require-hashes`` if missing."""
    os.makedirs(directory, exist_ok=True)
    missing = [pin for pin in PINS if not os.path.exists(os.path.join(directory, pin[1]))]
    if missing and local:
        for _, name, _ in missing:
            with open(os.path.join(local, name), "rb") as src, open(os.path.join(directory, name), "wb") as dst:
                dst.write(src.read())
    elif missing:
        requirements = os.path.join(directory, "requirements.txt")
        with open(requirements, "w") as handle:
            handle.writelines(f"{req} --hash=sha256:{sha}\n" for req, _, sha in missing)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
             "--require-hashes", "-d", directory, "-r", requirements],
            check=True,
        )
    wheels = []
    for _, name, sha in PINS:
        path = os.path.join(directory, name)
        actual = _sha256(path)
        if actual != sha:
            raise SystemExit(f"{path}: sha256 {actual} does not match the pinned {sha}")
        wheels.append(path)
    return wheels


def ensure_corpus(cache: str = DEFAULT_CACHE, local: Optional[str] = None) -> str:
    """The directory holding the unpacked ``.py`` files of the pinned wheels."""
    source = os.path.join(cache, "src")
    marker = os.path.join(source, ".complete")
    if os.path.exists(marker):
        return source
    for wheel in fetch_wheels(os.path.join(cache, "wheels"), local):
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():
                if member.endswith(".py"):
                    archive.extract(member, source)
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
    parser.add_argument("--cache", default=DEFAULT_CACHE, help="where wheels and sources are kept")
    parser.add_argument("--wheels", help="a directory that already holds the pinned wheels")
    args = parser.parse_args()
    print(ensure_corpus(args.cache, args.wheels))


if __name__ == "__main__":
    main()
