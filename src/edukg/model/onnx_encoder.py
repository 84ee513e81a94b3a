"""The indexing encoder: the same model through ONNX Runtime, with int8 weights.

Embedding every text of the export is the one heavy step of search. NumPy in float32
runs it near this hardware's float32 limit; int8 matrix products (VNNI/AMX on current
x86) run it about three times as fast. The ONNX graph is written here from the model
package's own weights (nothing is downloaded), quantized per output channel, and kept
in a cache directory; vectors agree with the float32 ones to a mean cosine of 0.99
(docs/search.md has the measurements and the effect on search quality).

Queries are still embedded by the NumPy encoder, so `edukg serve` never loads ONNX
Runtime. Both packages are optional (`pip install 'edukg[index]'`); without them
`edukg index` uses the NumPy encoder.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from edukg.model.embedding import DIMENSIONS, MODEL_PACKAGE
from edukg.model.encoder import (
    _safetensors,
    clip,
    load_tokenizer,
    mean_pool,
    model_dir,
    package_version,
    pad,
)

_HEADS = 12
_BATCH = 64  # texts per run: ONNX Runtime threads within each product


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


def _graph(weights: dict[str, np.ndarray]) -> Any:
    """A BERT encoder graph (last hidden state) over the model's weights."""
    import onnx  # noqa: PLC0415
    from onnx import TensorProto, helper, numpy_helper  # noqa: PLC0415

    inits: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, value: Any) -> str:
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def weight(name: str, value: np.ndarray) -> str:
        return const(name, np.ascontiguousarray(value, dtype=np.float32))

    def node(op: str, inputs: list[str], **attrs: Any) -> str:
        out = f"{op.lower()}_{len(nodes)}"
        nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    t = weights
    weight("words", t["embeddings.word_embeddings.weight"])
    weight(
        "positions",
        t["embeddings.position_embeddings.weight"]
        + t["embeddings.token_type_embeddings.weight"][0],
    )
    const("zero", np.array(0, np.int64))
    const("one", np.array(1, np.int64))
    const("one_1d", np.array([1], np.int64))
    const("f1", np.array(1.0, np.float32))
    const("masked", np.array(-10000.0, np.float32))
    const("split", np.array([0, 0, _HEADS, DIMENSIONS // _HEADS], np.int64))
    const("merge", np.array([0, 0, DIMENSIONS], np.int64))
    const("scale", np.array(1 / np.sqrt(DIMENSIONS // _HEADS), np.float32))
    const("bias_axes", np.array([1, 2], np.int64))
    length = node("Squeeze", [node("Gather", [node("Shape", ["ids"]), "one_1d"], axis=0)])
    positions = node("Range", ["zero", length, "one"])
    x = node("Add", [node("Gather", ["words", "ids"]), node("Gather", ["positions", positions])])
    x = node(
        "LayerNormalization",
        [
            x,
            weight("ln0_w", t["embeddings.LayerNorm.weight"]),
            weight("ln0_b", t["embeddings.LayerNorm.bias"]),
        ],
        axis=-1,
        epsilon=1e-12,
    )
    bias = node("Unsqueeze", [node("Mul", [node("Sub", ["f1", "mask"]), "masked"]), "bias_axes"])
    layer = 0
    while f"encoder.layer.{layer}.attention.self.query.weight" in t:
        p = f"encoder.layer.{layer}."

        def dense(x: str, name: str, p: str = p) -> str:
            w = weight(p + name + ".w", t[p + name + ".weight"].T)
            b = weight(p + name + ".b", t[p + name + ".bias"])
            return node("Add", [node("MatMul", [x, w]), b])

        def norm(x: str, name: str, p: str = p) -> str:
            w = weight(p + name + ".ln_w", t[p + name + ".weight"])
            b = weight(p + name + ".ln_b", t[p + name + ".bias"])
            return node("LayerNormalization", [x, w, b], axis=-1, epsilon=1e-12)

        def heads(x: str, perm: list[int]) -> str:
            return node("Transpose", [node("Reshape", [x, "split"])], perm=perm)

        q = heads(dense(x, "attention.self.query"), [0, 2, 1, 3])
        k = heads(dense(x, "attention.self.key"), [0, 2, 3, 1])
        v = heads(dense(x, "attention.self.value"), [0, 2, 1, 3])
        scores = node("Add", [node("Mul", [node("MatMul", [q, k]), "scale"]), bias])
        context = node("MatMul", [node("Softmax", [scores], axis=-1), v])
        merged = node("Reshape", [node("Transpose", [context], perm=[0, 2, 1, 3]), "merge"])
        h1 = norm(
            node("Add", [dense(merged, "attention.output.dense"), x]), "attention.output.LayerNorm"
        )
        up = node("Gelu", [dense(h1, "intermediate.dense")])
        x = norm(node("Add", [dense(up, "output.dense"), h1]), "output.LayerNorm")
        layer += 1
    nodes.append(helper.make_node("Identity", [x], ["hidden"], name="hidden"))
    graph = helper.make_graph(
        nodes,
        "minilm",
        [
            helper.make_tensor_value_info("ids", TensorProto.INT64, ["n", "l"]),
            helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["n", "l"]),
        ],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["n", "l", DIMENSIONS])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    onnx.checker.check_model(model)
    return model


def quantized_model(directory: Path | None = None) -> Path:
    """The int8 ONNX model for the installed weights, written on first use."""
    from onnxruntime.quantization import QuantType, quantize_dynamic  # noqa: PLC0415

    cache = cache_dir()
    target = cache / f"all-MiniLM-L6-v2.{package_version()}.int8.onnx"
    if target.exists():
        return target
    import onnx  # noqa: PLC0415

    cache.mkdir(parents=True, exist_ok=True)
    weights = _safetensors((directory or model_dir()) / "model.safetensors")
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        plain = Path(tmp) / "plain.onnx"
        graph = _graph(weights)
        onnx.save(graph, plain)
        quantized = Path(tmp) / "int8.onnx"
        # Only products with a weight matrix; attention's own products stay float.
        weighted = [
            n.name
            for n in graph.graph.node
            if n.op_type == "MatMul" and any(i.endswith(".w") for i in n.input)
        ]
        with _quiet_root_logger():
            quantize_dynamic(
                plain,
                quantized,
                weight_type=QuantType.QInt8,
                per_channel=True,
                nodes_to_quantize=weighted,
            )
        os.replace(quantized, target)
    return target


class OnnxEncoder:
    """Unit vectors like `Encoder.encode`, from the int8 model (for indexing)."""

    def __init__(self, threads: int | None = None) -> None:
        import onnxruntime as ort  # noqa: PLC0415

        self._tokens = load_tokenizer()
        self.fingerprint = f"{MODEL_PACKAGE}=={package_version()};onnxruntime-int8-1"
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or os.cpu_count() or 1
        options.log_severity_level = 3
        self._session = ort.InferenceSession(
            str(quantized_model()), options, providers=["CPUExecutionProvider"]
        )

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors (float32), one row per text, in order."""
        ids = [e.ids for e in self._tokens.encode_batch(clip(texts))]
        out = np.zeros((len(ids), DIMENSIONS), dtype=np.float32)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        for start in range(0, len(order), _BATCH):
            chunk = order[start : start + _BATCH]
            tokens, mask = pad([ids[i] for i in chunk])
            (hidden,) = self._session.run(None, {"ids": tokens, "mask": mask})
            out[chunk] = mean_pool(hidden, mask)
        return out
