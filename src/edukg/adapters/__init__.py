"""Adapters: each translates one outside shape (HTTP routes, MCP tools, the OpenAPI
document, the explorer) to calls of the services and back, and holds no graph logic.
"""
