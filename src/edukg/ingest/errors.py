"""The one error a load stops with."""

from __future__ import annotations


class LoadError(Exception):
    """A load that cannot finish; the message names the file and line where it can."""


class LoadArgumentError(LoadError):
    """A load asked for with arguments that cannot work (a version that is not one, a
    `--keep` below 1): refused before anything is read."""
