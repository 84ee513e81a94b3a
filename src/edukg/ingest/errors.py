"""The one error a load stops with."""

from __future__ import annotations


class LoadError(Exception):
    """A load that cannot finish; the message names the file and line where it can."""
