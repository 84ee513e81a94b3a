"""edukg: a self-hosted server for the Learning Commons Knowledge Graph export."""

__version__ = "0.1.0"
