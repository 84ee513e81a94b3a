"""Serve benchmark: edukg against the ceiling (nginx, static bytes) and an alternative
(datasette over the same SQLite file), on identical request mixes.

    python -m bench.serve [--db LOADED.db] [--export DIR] [--seconds 10]

Needs `wrk` and `nginx` (Debian: apt-get install wrk nginx) and `datasette` (pip install
datasette). Each server is pinned to core 0 and the load generator to core 1 (taskset).
Throughput: wrk, closed loop, 32 connections. Latency: an asyncio client at a fixed rate of
half the server's measured peak, p50/p99. The request mix is the fixed, weighted table in
`mix()`. Everything stops by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

import httpx

from harness.load import wrk
from harness.processes import EDUKG, free_port, wait_port

ROOT = Path(__file__).resolve().parents[1]

BASE = "/knowledge-graph/v0"


def mix(db: str) -> list[tuple[str, int, str, str]]:
    """(kind, weight, edukg path, equivalent datasette SQL) for real records of `db`."""
    c = sqlite3.connect(db)
    lc = c.execute(
        "SELECT identifier FROM docs WHERE kind = 'component' LIMIT 1 OFFSET 100"
    ).fetchone()[0]
    fw_id, fw_case = c.execute(
        "SELECT f.identifier, f.case_uuid FROM docs f JOIN membership m ON m.framework = f.identifier"
        " WHERE f.kind = 'framework' GROUP BY f.identifier HAVING count(*) > 300 LIMIT 1"
    ).fetchone()
    std_id, std_case = c.execute(
        "SELECT d.identifier, d.case_uuid FROM docs d JOIN links l ON l.node = d.identifier"
        " AND l.relation = 'child' WHERE d.kind = 'standard' LIMIT 1 OFFSET 500"
    ).fetchone()
    pre_id, pre_case = c.execute(
        "SELECT d.identifier, d.case_uuid FROM docs d JOIN links l ON l.node = d.identifier"
        " AND l.relation = 'prereq' LIMIT 1"
    ).fetchone()
    xw_id, xw_case = c.execute(
        "SELECT d.identifier, d.case_uuid FROM docs d JOIN rows r ON r.node = d.identifier"
        " AND r.relation = 'crosswalk' LIMIT 1"
    ).fetchone()
    c.close()
    grade_mask = 1 << 4  # grade 3
    members = (
        "SELECT d.doc FROM membership m JOIN docs d ON d.identifier = m.identifier WHERE"
        f" m.framework = '{fw_id}' AND (m.grades & {grade_mask}) != 0 ORDER BY m.identifier LIMIT 100"
    )
    return [
        ("learning component by id", 2, f"{BASE}/learning-components/{lc}",
         f"SELECT doc FROM docs WHERE identifier = '{lc}'"),
        ("standards of a framework, grade 3, limit 100", 2,
         f"{BASE}/academic-standards?standardsFrameworkCaseIdentifierUUID={fw_case}&gradeLevel=3",
         members),
        ("children", 2, f"{BASE}/academic-standards/{std_case}/children",
         f"SELECT d.doc FROM links l JOIN docs d ON d.identifier = l.other WHERE l.relation = 'child'"
         f" AND l.node = '{std_id}' ORDER BY l.other LIMIT 100"),
        ("one standard", 3, f"{BASE}/academic-standards/{std_case}",
         f"SELECT doc FROM docs WHERE case_uuid = '{std_case}' AND kind = 'standard'"),
        ("prerequisites", 1, f"{BASE}/academic-standards/{pre_case}/prerequisites",
         f"SELECT d.doc FROM links l JOIN docs d ON d.identifier = l.other WHERE l.relation = 'prereq'"
         f" AND l.node = '{pre_id}' ORDER BY l.other LIMIT 100"),
        ("crosswalks", 1, f"{BASE}/academic-standards/{xw_case}/crosswalks",
         f"SELECT doc FROM rows WHERE relation = 'crosswalk' AND node = '{xw_id}' ORDER BY sort_key LIMIT 100"),
    ]  # fmt: skip


async def fixed_rate(
    port: int, paths: list[str], headers: dict[str, str], rate: float, seconds: float
) -> dict[str, float]:
    latencies: list[float] = []
    errors = 0
    conns = 16
    interval = conns / rate
    start = time.perf_counter()

    async def one(offset: int) -> None:
        nonlocal errors
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        n = 0
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        while True:
            due = start + offset * interval / conns + n * interval
            if due - start > seconds:
                break
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
            path = paths[(offset + n * conns) % len(paths)]
            writer.write(f"GET {path} HTTP/1.1\r\nHost: b\r\n{head}\r\n".encode())
            h = await reader.readuntil(b"\r\n\r\n")
            lengths = [
                int(x.split(b":")[1])
                for x in h.split(b"\r\n")
                if x.lower().startswith(b"content-length")
            ]
            if lengths:
                await reader.readexactly(lengths[0])
            else:  # chunked
                while True:
                    size = int((await reader.readuntil(b"\r\n")).strip(), 16)
                    await reader.readexactly(size + 2)
                    if size == 0:
                        break
            # latency from the scheduled time: queueing behind a slow answer counts
            latencies.append(time.perf_counter() - due)
            if not h.startswith(b"HTTP/1.1 200"):
                errors += 1  # counted with wrk's in the same figure
            n += 1
        writer.close()

    await asyncio.gather(*(one(i) for i in range(conns)))
    latencies.sort()
    return {
        "p50": latencies[len(latencies) // 2] * 1000,
        "p99": latencies[int(len(latencies) * 0.99)] * 1000,
        "achieved": len(latencies) / seconds,
        "fixed_errors": errors,
    }


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _edukg(edukg: list[str], db: str, key: str, weighted: list[tuple[str, str, str]],
           seconds: int, procs: list[subprocess.Popen[bytes]]) -> tuple[dict[str, dict[str, float]], dict[str, bytes]]:  # fmt: skip
    """edukg with its response cache (the default) and without it; the bodies it served."""
    results: dict[str, dict[str, float]] = {}
    headers = {"x-api-key": key}
    paths = [p for _, p, _ in weighted]
    bodies: dict[str, bytes] = {}
    for name, extra in (("edukg", []), ("edukg-nocache", ["--response-cache-mb", "0"])):
        port = free_port()
        proc = subprocess.Popen(["taskset", "-c", "0", *edukg, "serve", "--db", db, "--port", str(port),
                                 "--no-access-log", *extra], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)  # fmt: skip
        procs.append(proc)
        wait_port(port)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers) as client:
            for kind, path, _ in weighted:
                answer = client.get(path)
                assert answer.status_code == 200, (kind, answer.status_code, answer.text[:200])
                bodies[path] = answer.content
        idle = rss_mb(proc.pid)
        results[name] = wrk(f"http://127.0.0.1:{port}", paths, headers, seconds)
        loaded = rss_mb(proc.pid)
        results[name].update(
            asyncio.run(fixed_rate(port, paths, headers, results[name]["rps"] / 2, seconds))
        )
        results[name]["rss_idle"], results[name]["rss_load"] = idle, loaded
        proc.terminate()
        proc.wait()
    return results, bodies


def _nginx(tmp: Path, paths: list[str], bodies: dict[str, bytes], seconds: int,
           procs: list[subprocess.Popen[bytes]]) -> dict[str, float]:  # fmt: skip
    """nginx: the byte-identical bodies as static files."""
    root = tmp / "www"
    root.mkdir()
    tmp.chmod(0o755)  # nginx's workers run as an unprivileged user
    root.chmod(0o755)
    lookup = {}
    for n, path in enumerate(dict.fromkeys(paths)):
        (root / f"r{n}.json").write_bytes(bodies[path])
        lookup[path] = f"/r{n}.json"
    nport = free_port()
    conf = tmp / "nginx.conf"
    conf.write_text(f"""worker_processes 1; daemon off; pid {tmp}/nginx.pid; error_log {tmp}/error.log;
events {{ worker_connections 1024; }}
http {{ access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000;
  server {{ listen 127.0.0.1:{nport}; root {root}; default_type application/json; }} }}
""")
    proc = subprocess.Popen(["taskset", "-c", "0", "nginx", "-c", str(conf)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    procs.append(proc)
    wait_port(nport)
    npaths = [lookup[p] for p in paths]
    result = wrk(f"http://127.0.0.1:{nport}", npaths, {}, seconds)
    result.update(asyncio.run(fixed_rate(nport, npaths, {}, min(result["rps"] / 2, 6000), seconds)))
    proc.terminate()
    proc.wait()
    return result


def _datasette(datasette: str, db: str, weighted: list[tuple[str, str, str]], seconds: int,
               procs: list[subprocess.Popen[bytes]]) -> dict[str, float]:  # fmt: skip
    """datasette: the same data, the equivalent queries, as JSON."""
    dport = free_port()
    proc = subprocess.Popen(["taskset", "-c", "0", datasette, "serve", db, "--port", str(dport),
                             "--setting", "sql_time_limit_ms", "5000", "--nolock"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    procs.append(proc)
    wait_port(dport, 60)
    name = Path(db).stem
    dpaths = [f"/{name}.json?_shape=array&sql={quote(sql)}" for _, _, sql in weighted]
    with httpx.Client(base_url=f"http://127.0.0.1:{dport}") as client:
        check = client.get(dpaths[0])
        assert check.status_code == 200, check.text[:300]
    result = wrk(f"http://127.0.0.1:{dport}", dpaths, {}, seconds)
    result.update(asyncio.run(fixed_rate(dport, dpaths, {}, result["rps"] / 2, seconds)))
    proc.terminate()
    proc.wait()
    return result


def _loaded_db(edukg: list[str], args: argparse.Namespace, tmp: Path) -> str:
    if args.db is not None:
        return str(args.db)
    export = Path(args.export) if args.export else tmp / "export"
    if not args.export:
        subprocess.run([*edukg, "generate", str(export), "--scale", "full", "--seed", "7"],
                       check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    db = str(tmp / "bench.db")
    subprocess.run([*edukg, "load", str(export), "--db", db, "--no-index"], check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    return db


def _report(table: list[tuple[str, int, str, str]], results: dict[str, dict[str, float]]) -> None:
    print("request mix (weight): " + ", ".join(f"{k} ({w})" for k, w, _, _ in table))
    for name, r in results.items():
        print(f"{name:<10} {r['rps']:9,.0f} req/s (32 conns, closed loop)   fixed rate {r['achieved']:7,.0f}/s:"
              f" p50 {r['p50']:6.2f} ms  p99 {r['p99']:6.2f} ms   errors {int(r['errors'] + r['fixed_errors'])}")  # fmt: skip
    e, ngx, d = results["edukg"], results["nginx"], results["datasette"]
    nc = results["edukg-nocache"]
    print(f"edukg / datasette throughput  {e['rps'] / d['rps']:.1f}x   (target >= 5x;"
          f" without the response cache {nc['rps'] / d['rps']:.1f}x)")  # fmt: skip
    print(f"edukg / nginx throughput      {e['rps'] / ngx['rps'] * 100:.0f}%   (target >= 30%;"
          f" without the response cache {nc['rps'] / ngx['rps'] * 100:.0f}%)")  # fmt: skip
    print(f"edukg p99 at half its peak    {e['p99']:.2f} ms (target <= 20 ms)")
    print(
        f"edukg worker RSS              idle {e['rss_idle']:.0f} MB, after load {e['rss_load']:.0f} MB (target <= 300 MB)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", help="an already loaded SQLite database")
    parser.add_argument(
        "--export", help="an export directory to load (default: generate full scale)"
    )
    parser.add_argument("--seconds", type=int, default=10)
    args = parser.parse_args()
    for tool in ("wrk", "nginx", "taskset"):
        if not shutil.which(tool):
            print(f"needs {tool}: apt-get install wrk nginx", file=sys.stderr)
            return 2
    datasette = shutil.which("datasette") or str(Path(sys.executable).with_name("datasette"))
    edukg = [*EDUKG]
    tmp = Path(tempfile.mkdtemp(prefix="edukg-serve-bench-"))
    procs: list[subprocess.Popen[bytes]] = []
    try:
        db = _loaded_db(edukg, args, tmp)
        key = subprocess.run([*edukg, "keys", "create", f"bench-{os.getpid()}", "--rate", "0", "--db", db],
                             check=True, capture_output=True, text=True).stdout.splitlines()[-1]  # fmt: skip
        table = mix(db)
        weighted = [(kind, path, sql) for kind, w, path, sql in table for _ in range(w)]
        results, bodies = _edukg(edukg, db, key, weighted, args.seconds, procs)
        paths = [p for _, p, _ in weighted]
        results["nginx"] = _nginx(tmp, paths, bodies, args.seconds, procs)
        results["datasette"] = _datasette(datasette, db, weighted, args.seconds, procs)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    _report(table, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
