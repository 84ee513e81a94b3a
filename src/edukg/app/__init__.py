"""The ASGI application: one route table for everything the server answers."""

from edukg.app.core import SEARCH_COST, EdukgApp, create_app

__all__ = ["SEARCH_COST", "EdukgApp", "create_app"]
