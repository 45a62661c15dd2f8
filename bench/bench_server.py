"""``verirl serve`` under load, on loopback, against in-process verification in the same run.

Default (latency/throughput): starts a real server (``--executor`` for its verification
stage), then for 1, 8 and 64 concurrent clients sends ``--requests`` round-trips of
``POST /verify`` (``--batch`` items each, cheap environments, half right and half wrong
answers) and prints verifies/s, p50 and p99 latency, next to the same problems verified
in-process (``Environment.verify`` in a loop, and through ``BatchVerifier`` on the same
executor kind) and their ratio. Targets (2 cores): ≥ 1,000 verifies/s, p99 ≤ 20 ms at 8
clients. ``os.getloadavg()`` is printed: on a shared machine the numbers move with it.
Clients (``--client``): ``procs`` (default) runs each in its own process with keep-alive
``http.client``, as trainers' workers are; ``async`` puts them all on one httpx event loop
in this process, whose own scheduling then shows in the tail. ``--stacks fast unfrozen``
compares the server with and without ``serve.gc_freeze`` in one run.

``--soak SECONDS``: mixed good traffic (verify with a curriculum, draws, /ws episodes) and
hostile traffic (``tests/serve/hostile_requests.py``) for that long; prints the server's RSS
every 10 s, its bound (first sample after warm-up × 1.5 + 64 MiB), the 5xx count, and the
lost-verdict count (verdicts the clients received minus those the curriculum counted).

``--kill9``: after the soak, ``kill -9`` the server mid-load, restart it on the same state
file, and check the curriculum (verdicts ≥ received, seed counter past every seed handed out).

Every loop is bounded in count and time; nothing leaves the loopback interface.

    python bench/bench_server.py                    # latency/throughput
    python bench/bench_server.py --soak 600 --kill9 # the 10-minute soak
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "src")]

from tests.serve.helpers import ServerProcess  # noqa: E402
from tests.serve.hostile_requests import hostile_request  # noqa: E402

from verirl.envs import get_env  # noqa: E402

CHEAP = ["addition", "multiplication", "chain_sum"]


def _items(n: int, seed0: int = 0) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        env = get_env(CHEAP[i % len(CHEAP)])
        p = env.generate(i % 4, seed0 + i)
        answer = env.solve(p) if i % 2 == 0 else "-1"
        out.append(
            {
                "env": p.env,
                "difficulty": p.difficulty,
                "seed": p.seed,
                "output": f"\\boxed{{{answer}}}",
            }
        )
    return out


def in_process(items: list[dict[str, Any]], executor: str) -> tuple[float, float]:
    """verifies/s of Environment.verify in a loop, and of BatchVerifier on ``executor``."""
    from verirl.verification.batch import BatchVerifier
    from verirl.verification.executors import EXECUTORS

    problems = [get_env(i["env"]).generate(i["difficulty"], i["seed"]) for i in items]
    texts = [i["output"] for i in items]
    t0 = time.perf_counter()
    for p, t in zip(problems, texts, strict=True):
        get_env(p.env).verify(p, t)
    direct = len(items) / (time.perf_counter() - t0)
    ex = EXECUTORS.get(executor).build({})
    try:
        bv = BatchVerifier(ex, timeout_s=10)
        bv.verify(problems[:8], texts[:8])  # warm the workers
        t0 = time.perf_counter()
        for k in range(0, len(items), 64):
            bv.verify(problems[k : k + 64], texts[k : k + 64])
        staged = len(items) / (time.perf_counter() - t0)
    finally:
        ex.close()
    return direct, staged


async def _load(url: str, clients: int, requests: int, batch: int) -> dict[str, float]:
    import httpx

    items = _items(max(batch * 8, 64), seed0=10_000)
    latencies: list[float] = []
    per = max(1, requests // clients)
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:

        async def one(k: int) -> None:
            rng = random.Random(k)
            for _ in range(per):
                body = {"items": rng.sample(items, batch)}
                t0 = time.perf_counter()
                r = await client.post("/verify", json=body)
                latencies.append(time.perf_counter() - t0)
                assert r.status_code == 200, r.text

        await asyncio.gather(*(one(k) for k in range(min(clients, 4))))  # warm-up
        latencies.clear()
        t0 = time.perf_counter()
        await asyncio.gather(*(one(k) for k in range(clients)))
        wall = time.perf_counter() - t0
    return _summary(latencies, wall, batch, warm_done=min(clients, 4) * per)


def _summary(latencies: list[float], wall: float, batch: int, warm_done: int) -> dict[str, float]:
    """Rates over ``wall`` seconds and the latency percentiles of one client count."""
    lat = sorted(latencies)
    return {
        "verifies_s": len(lat) * batch / wall,
        "requests_s": len(lat) / wall,
        "p50_ms": 1000 * statistics.median(lat),
        "p99_ms": 1000 * lat[min(len(lat) - 1, int(0.99 * len(lat)))],
        "requests_done": len(lat),
        "warm_done": warm_done,
    }


def _client_proc(url: str, seed: int, per: int, batch: int, warm: int, conn: Any) -> None:
    """One client in its own process (a trainer's worker): keep-alive ``http.client``
    round-trips; sends back its latencies (warm-up excluded) and its wall span."""
    import http.client
    import json
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    items = _items(max(batch * 8, 64), seed0=10_000)
    rng = random.Random(seed)
    c = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    lat: list[float] = []
    conn.recv()  # start together
    t_start = time.perf_counter()
    for n in range(warm + per):
        body = json.dumps({"items": rng.sample(items, batch)})
        t0 = time.perf_counter()
        c.request("POST", "/verify", body, {"content-type": "application/json"})
        r = c.getresponse()
        data = r.read()
        if n >= warm:
            lat.append(time.perf_counter() - t0)
        elif n == warm - 1:
            t_start = time.perf_counter()
        assert r.status == 200, data[:200]
    conn.send((lat, t_start, time.perf_counter()))
    c.close()


def _load_procs(url: str, clients: int, requests: int, batch: int) -> dict[str, float]:
    """Like :func:`_load` with each client in its own process (no client shares an event
    loop or a GIL with another, as with trainers' workers)."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    per = max(1, requests // clients)
    warm = max(1, min(50, per // 4))
    pipes, procs = [], []
    for k in range(clients):
        here, there = ctx.Pipe()
        p = ctx.Process(target=_client_proc, args=(url, k, per, batch, warm, there), daemon=True)
        p.start()
        pipes.append(here)
        procs.append(p)
    for here in pipes:
        here.send("go")
    results = [here.recv() for here in pipes]
    for p in procs:
        p.join(timeout=60)
    wall = max(r[2] for r in results) - min(r[1] for r in results)
    return _summary([x for r in results for x in r[0]], wall, batch, warm_done=clients * warm)


STACKS = {
    "fast": ["serve.http=auto", "serve.loop=auto"],  # httptools + uvloop when installed
    "plain": ["serve.http=h11", "serve.loop=asyncio"],  # uvicorn's pure-Python stack
    # the fast stack without gc.freeze: a full collection scans every start-up object
    "unfrozen": ["serve.http=auto", "serve.loop=auto", "serve.gc_freeze=false"],
}


def bench(args: argparse.Namespace) -> None:
    items = _items(args.inproc)
    direct, staged = in_process(items, args.executor)
    print(f"load average {os.getloadavg()}; executor={args.executor}, batch={args.batch}")
    print(f"in-process: Environment.verify {direct:,.0f}/s; BatchVerifier {staged:,.0f}/s")
    p99: dict[str, dict[int, float]] = {}
    for stack in args.stacks:
        p99[stack] = _bench_stack(args, stack, direct, staged)
    if len(args.stacks) > 1:
        a, b = args.stacks[0], args.stacks[1]
        for clients in args.clients:
            print(f"p99 at {clients} clients: {a} / {b} = {p99[a][clients] / p99[b][clients]:.3f}")
    print(f"load average after: {os.getloadavg()}")


def _bench_stack(
    args: argparse.Namespace, stack: str, direct: float, staged: float
) -> dict[int, float]:
    p99: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(
            Path(tmp) / "s.sqlite",
            f"verification.executor.name={args.executor}",
            *STACKS[stack],
            *args.set,
        ).start()
        try:
            assert server.proc is not None
            pid = server.proc.pid
            print(
                f"server stack {stack!r}: {' '.join([*STACKS[stack], *args.set])}; "
                f"clients: {args.client}"
            )
            print(
                f"{'clients':>7} {'verifies/s':>11} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8}"
                f" {'vs Env.verify':>14} {'vs BatchVerifier':>17} {'server CPU ms/verify':>21}"
            )
            for clients in args.clients:
                c0 = _cpu_s(pid)
                if args.client == "procs":
                    r = _load_procs(server.url, clients, args.requests, args.batch)
                else:
                    r = asyncio.run(_load(server.url, clients, args.requests, args.batch))
                # load-independent: the server's own CPU time per verify (warm-up included)
                done = r["requests_done"] + r["warm_done"]
                per = 1000 * (_cpu_s(pid) - c0) / done
                p99[clients] = r["p99_ms"]
                print(
                    f"{clients:>7} {r['verifies_s']:>11,.0f} {r['requests_s']:>8,.0f} "
                    f"{r['p50_ms']:>8.1f} {r['p99_ms']:>8.1f} {r['verifies_s'] / direct:>14.3f}"
                    f" {r['verifies_s'] / staged:>17.3f} {per / args.batch:>21.3f}"
                )
        finally:
            server.kill()
    return p99


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def soak(args: argparse.Namespace) -> None:
    import httpx

    tmp = tempfile.mkdtemp()
    state = Path(tmp) / "soak.sqlite"
    server = ServerProcess(state, f"verification.executor.name={args.executor}").start()
    assert server.proc is not None
    stop = threading.Event()
    lock = threading.Lock()
    stats = {"good": 0, "hostile": 0, "5xx": 0, "received": 0, "wrong": 0, "transport": 0}
    seeds: list[int] = []

    def good(k: int) -> None:
        with httpx.Client(base_url=server.url, timeout=60) as c:
            i = 0
            while not stop.is_set():
                try:
                    drawn = c.post("/curricula/soak/tasks", json={"n": 4}).json()["problems"]
                    items, right = [], []
                    for j, p in enumerate(drawn):
                        ok = (i + j + k) % 2 == 0
                        env = get_env(p["env"])
                        ans = env.solve(env.generate(p["difficulty"], p["seed"])) if ok else "x"
                        items.append(
                            {
                                **{x: p[x] for x in ("env", "difficulty", "seed")},
                                "output": f"\\boxed{{{ans}}}",
                            }
                        )
                        right.append(ok)
                    r = c.post("/verify", json={"items": items, "curriculum": "soak"})
                    with lock:
                        stats["good"] += 2
                        if r.status_code >= 500:
                            stats["5xx"] += 1
                            continue
                        for ok, v in zip(right, r.json()["verdicts"], strict=True):
                            stats["received"] += 1
                            stats["wrong"] += int(v["correct"] != ok)
                        seeds.extend(p["seed"] for p in drawn)
                    i += 1
                except httpx.TransportError:
                    with lock:
                        stats["transport"] += 1
                    if not server.alive():
                        return

    def hostile(k: int) -> None:
        rng = random.Random(f"soak/{k}")
        with httpx.Client(base_url=server.url, timeout=60) as c:
            while not stop.is_set():
                m, p, b, h = hostile_request(rng, 1_048_576)
                try:
                    r = c.request(m, p, content=b, headers=h)
                except httpx.TransportError:
                    if not server.alive():
                        return
                    continue
                with lock:
                    stats["hostile"] += 1
                    stats["5xx"] += int(r.status_code >= 500)

    threads = [threading.Thread(target=good, args=(k,)) for k in range(args.good)]
    threads += [threading.Thread(target=hostile, args=(k,)) for k in range(args.hostile)]
    for t in threads:
        t.start()
    t0 = time.monotonic()
    curve: list[tuple[float, float]] = []
    while time.monotonic() - t0 < args.soak:
        time.sleep(min(10.0, args.soak))
        rss = _rss_mb(server.proc.pid)
        curve.append((time.monotonic() - t0, rss))
        with lock:
            print(f"t={curve[-1][0]:6.0f}s rss={rss:7.1f} MiB {stats}", flush=True)
    warm = curve[min(1, len(curve) - 1)][1]
    bound = 1.5 * warm + 64
    peak = max(r for _, r in curve)
    print(
        f"RSS bound {bound:.0f} MiB (1.5 × {warm:.0f} + 64); peak {peak:.0f} MiB: "
        f"{'within' if peak <= bound else 'ABOVE'}"
    )
    if args.kill9:
        server.kill()  # SIGKILL mid-load
    stop.set()
    for t in threads:
        t.join(timeout=120)
    if args.kill9:
        server = ServerProcess(state, f"verification.executor.name={args.executor}").start()
    summary = httpx.get(server.url + "/curricula/soak", timeout=60).json()
    lost = max(0, stats["received"] - summary["verdicts"])
    print(
        f"received {stats['received']} verdicts, curriculum counted {summary['verdicts']}: "
        f"lost {lost}; wrong verdicts {stats['wrong']}; 5xx {stats['5xx']}; hostile "
        f"{stats['hostile']}; seed counter {summary['seed_counter']} > max handed out "
        f"{max(seeds, default=-1)}: {summary['seed_counter'] > max(seeds, default=-1)}"
        + (" (after kill -9 and restart)" if args.kill9 else "")
    )
    server.kill()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--executor", default="threads", choices=["inline", "threads", "processes"])
    ap.add_argument("--clients", type=int, nargs="+", default=[1, 8, 64])
    ap.add_argument("--requests", type=int, default=400, help="round-trips per client count")
    ap.add_argument("--batch", type=int, default=1, help="items per POST /verify")
    ap.add_argument(
        "--stacks",
        nargs="+",
        default=["fast", "plain"],
        choices=sorted(STACKS),
        help="server stacks to measure in this run (the first two's p99 ratio is printed)",
    )
    ap.add_argument(
        "--client",
        default="procs",
        choices=["procs", "async"],
        help="procs: each client its own process with http.client (as trainers' workers); "
        "async: all clients on one httpx event loop in this process",
    )
    ap.add_argument(
        "--set", nargs="*", default=[], help="server config overrides (key=value) for every stack"
    )
    ap.add_argument("--inproc", type=int, default=2000, help="in-process baseline items")
    ap.add_argument("--soak", type=float, default=0.0, help="soak seconds (0: no soak)")
    ap.add_argument("--good", type=int, default=4, help="soak: good-traffic clients")
    ap.add_argument("--hostile", type=int, default=2, help="soak: hostile clients")
    ap.add_argument("--kill9", action="store_true", help="soak: kill -9 and restart at the end")
    args = ap.parse_args()
    if args.soak > 0:
        soak(args)
    else:
        bench(args)


if __name__ == "__main__":
    main()
