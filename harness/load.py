"""Load from a second process: wrk, closed loop, on core 1 (servers under test are pinned
to core 0), over a list of paths in turn. The one runner every throughput benchmark uses."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path


def wrk(url_base: str, paths: list[str], headers: dict[str, str], seconds: int) -> dict[str, float]:
    """{"rps", "errors", "p99 ms"} of wrk -t1 -c32 over `paths` in turn, with `headers`."""
    script = Path(tempfile.mkstemp(suffix=".lua")[1])
    lines = ["local paths = {"] + [f"  [[{p}]]," for p in paths] + ["}", "local i = 0"]
    lines += [f'wrk.headers["{k}"] = "{v}"' for k, v in headers.items()]
    lines += ["request = function()", "  i = i % #paths + 1",
              '  return wrk.format("GET", paths[i])', "end"]  # fmt: skip
    script.write_text("\n".join(lines))
    out = subprocess.run(
        ["taskset", "-c", "1", "wrk", "-t1", "-c32", f"-d{seconds}s", "--latency", "-s", str(script),
         url_base],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    script.unlink()
    rps = float(next(x for x in out.splitlines() if x.startswith("Requests/sec")).split()[1])
    errors = 0
    for line in out.splitlines():
        if "Non-2xx" in line or "Socket errors" in line:
            errors += sum(int(t) for t in line.replace(",", " ").split() if t.isdigit())
    p99 = next(x for x in out.splitlines() if x.strip().startswith("99%")).split()[1]
    return {"rps": rps, "errors": errors, "p99 ms": _ms(p99)}


def _ms(text: str) -> float:
    """A wrk latency (`850.00us`, `2.31ms`, `1.02s`) in milliseconds."""
    for unit, factor in (("us", 0.001), ("ms", 1.0), ("s", 1000.0)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * factor
    return float(text)
