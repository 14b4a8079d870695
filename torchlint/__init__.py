"""torchlint: find and fix PyTorch performance anti-patterns."""

__version__ = "0.1.0"
