"""Rich consoles for the CLI: full width in a terminal, wide and unwrapped when output is piped."""

from __future__ import annotations

import os
import sys

from rich.console import Console


def console(stderr: bool = False) -> Console:
    """A console on stdout (or stderr); when not a terminal, 160 columns (or ``$COLUMNS``) so
    tables and messages are not folded at 80."""
    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() else int(os.environ.get("COLUMNS", "160"))
    return Console(stderr=stderr, width=width, soft_wrap=stderr)
