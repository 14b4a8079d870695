"""``torchlint bench``: check each rule's fixture pair against the linter, then time it.

Only this package imports torch, and only when the bench command runs.
"""
