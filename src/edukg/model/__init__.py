"""The graph's vocabulary, at the bottom of every layer: kinds, enums, grade masks,
the API's error types, and the embedding model that maps a text to a vector.

Everything in edukg may import from here; nothing here imports the rest of edukg.
"""
