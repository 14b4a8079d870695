"""``python -m torchlint``: the same command line as ``torchlint``."""

from torchlint.cli import main

raise SystemExit(main())
