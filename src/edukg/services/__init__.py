"""The operations on the graph: lookups, lists, progressions, curriculum and search.

The REST routes, the MCP tools and the CLI call these and nothing below them; the
services read through the store's protocol and never import the loader.
"""
