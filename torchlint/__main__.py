"""``python -m torchlint``: the same command line as ``torchlint``."""

from torchlint.cli import main

if __name__ == "__main__":  # not when a spawned process re-imports the main module (bench ranks)
    raise SystemExit(main())
