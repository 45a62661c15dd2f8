"""Hostile requests against a real ``verirl serve`` on loopback (the on-demand run of
``tests/serve/test_fuzz.py``): every route, ``--requests`` of them (CI: 10,000; on demand:
1,000,000), then hostile WebSocket messages. Prints the count, the status histogram, every
5xx (there must be none) and whether the server is still up.

    python bench/fuzz_server.py --requests 1000000 --procs 2 --workers 4
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "src")]

from tests.serve.helpers import ServerProcess  # noqa: E402
from tests.serve.hostile_requests import FuzzResult, fuzz, fuzz_websocket  # noqa: E402


def _fuzz_part(url: str, n: int, seed: int, workers: int, time_limit_s: float) -> FuzzResult:
    return fuzz(url, n, seed=seed, workers=workers, time_limit_s=time_limit_s)


def _fuzz_in_processes(url: str, args: argparse.Namespace) -> FuzzResult:
    """``--procs`` client processes (each ``--workers`` threads, its own seeded streams:
    seed * 1000 + process), so the client side is not one GIL; their results summed."""
    import multiprocessing as mp

    n = args.requests
    shares = [n // args.procs + (1 if i < n % args.procs else 0) for i in range(args.procs)]
    jobs = [
        (url, share, args.seed * 1000 + i, args.workers, args.time_limit)
        for i, share in enumerate(shares)
    ]
    with mp.get_context("fork").Pool(args.procs) as pool:
        parts = pool.starmap(_fuzz_part, jobs)
    total = FuzzResult()
    for part in parts:
        total.requests += part.requests
        total.statuses.update(part.statuses)
        total.server_errors += part.server_errors
        total.bad_detail += part.bad_detail
        total.transport_errors += part.transport_errors
        total.seconds = max(total.seconds, part.seconds)
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=10_000)
    ap.add_argument("--ws-messages", type=int, default=1_000)
    ap.add_argument("--workers", type=int, default=4, help="client threads (per process)")
    ap.add_argument("--procs", type=int, default=1, help="client processes")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=6 * 3600, help="seconds, at most")
    ap.add_argument("--executor", default="threads", choices=["inline", "threads", "processes"])
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(
            Path(tmp) / "fuzz.sqlite", f"verification.executor.name={args.executor}"
        ).start()
        try:
            t0 = time.monotonic()
            if args.procs > 1:
                result = _fuzz_in_processes(server.url, args)
            else:
                result = fuzz(
                    server.url,
                    args.requests,
                    seed=args.seed,
                    workers=args.workers,
                    time_limit_s=args.time_limit,
                    progress=lambda n: print(
                        f"{n:,} requests, {time.monotonic() - t0:.0f} s", flush=True
                    ),
                )
            sent, closed = fuzz_websocket(server.url, args.ws_messages, seed=args.seed)
            alive = server.alive()
        finally:
            server.kill()
    fives = sum(c for s, c in result.statuses.items() if s >= 500)
    print(
        f"HTTP requests: {result.requests:,} in {result.seconds:.0f} s "
        f"({result.requests / max(result.seconds, 1e-9):,.0f}/s)"
    )
    print(f"status codes: {dict(sorted(result.statuses.items()))}")
    print(
        f"5xx: {fives}; 4xx without a one-line detail: {len(result.bad_detail)}; "
        f"transport errors: {result.transport_errors}"
    )
    for line in result.server_errors[:20]:
        print("  5xx:", line)
    print(f"WebSocket messages: {sent:,} (sessions ended by the server: {closed})")
    print(f"server alive at the end: {alive}")
    return 0 if fives == 0 and alive and not result.bad_detail else 1


if __name__ == "__main__":
    sys.exit(main())
