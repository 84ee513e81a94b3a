"""The ASGI application: one route table for everything the server answers."""

from edukg.app.core import EdukgApp, create_app
from edukg.app.requests import SEARCH_COST

__all__ = ["SEARCH_COST", "EdukgApp", "create_app"]
