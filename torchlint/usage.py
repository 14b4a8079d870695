"""What every command shares: its exit codes, and an argument parser whose errors exit 2."""

from __future__ import annotations

import argparse

from torchlint.config import ConfigError

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # exit 2 with one line, like every usage error
        raise ConfigError(message)
