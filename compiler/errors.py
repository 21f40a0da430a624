"""User-facing errors: the CLI prints their message on one line and exits nonzero."""


class ConvcError(Exception):
    """An error with a message fit for the user (no traceback)."""
