"""The environment of a bench script's side that runs vLLM's CPU build in a child process
(``bench_vllm_engine.py``, ``bench_lora_sync.py``): ``threads`` OpenMP threads, no core held
back for vLLM's own use, the KV cache's GiB as the caller's environment sets it (default 1),
and the repository's ``src`` first on the path."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child_env(threads: int) -> dict[str, str]:
    env = {
        **os.environ,
        "OMP_NUM_THREADS": str(threads),
        "VLLM_CPU_NUM_OF_RESERVED_CPU": "0",
        "VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", "1"),
    }
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    return env
