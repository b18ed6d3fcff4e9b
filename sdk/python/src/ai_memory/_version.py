"""This package's version: the ai-memory release it belongs to (the Go
test internal/version checks that they agree)."""

__version__ = "0.7.0"
