"""torchlint: find and fix PyTorch performance anti-patterns."""

__version__ = "0.1.0"

# Where the rule pages live (docs/rules/<CODE>.md); SARIF output links each rule there.
HOMEPAGE = "https://github.com/torchlint/torchlint"
DOCS_URL = HOMEPAGE + "/blob/main/docs"
