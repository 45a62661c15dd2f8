"""Reading a Weights & Biases offline run back from its files, for the logger tests.

An offline run is ``<dir>/wandb/offline-run-<time>-<id>/run-<id>.wandb``: a 7-byte header
(``:W&B``, magic, version) then LevelDB-log records in 32 KiB blocks (each record: CRC-32C,
length, type — full, first, middle, last) whose payloads are ``wandb_internal_pb2.Record``
messages. The history records hold the logged metrics, one per step.
"""

from __future__ import annotations

import json
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

BLOCK = 32 * 1024
HEADER = 7
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def offline_run_file(run_dir: Path) -> Path:
    """The one ``.wandb`` file of the offline run under ``run_dir/wandb``."""
    found = sorted((run_dir / "wandb").glob("offline-run-*/run-*.wandb"))
    assert len(found) == 1, f"expected one offline run under {run_dir / 'wandb'}: {found}"
    return found[0]


def _payloads(path: Path) -> Iterator[bytes]:
    data = path.read_bytes()
    assert data[:4] == b":W&B", f"{path} is not a W&B run file"
    pos, pending = HEADER, b""
    while pos + HEADER <= len(data):
        left = BLOCK - pos % BLOCK
        if left < HEADER:  # a block's tail too short for a record header is padding
            pos += left
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos : pos + HEADER])
        body = data[pos + HEADER : pos + HEADER + length]
        pos += HEADER + length
        if kind == FULL:
            yield body
        elif kind == FIRST:
            pending = body
        elif kind == MIDDLE:
            pending += body
        elif kind == LAST:
            yield pending + body


def history(path: Path) -> dict[int, dict[str, Any]]:
    """Step → the metrics logged at it, read from the run file ``path``."""
    from wandb.proto import wandb_internal_pb2 as pb

    out: dict[int, dict[str, Any]] = {}
    for body in _payloads(path):
        record = pb.Record()
        record.ParseFromString(body)
        if record.WhichOneof("record_type") != "history":
            continue
        row = out.setdefault(record.history.step.num, {})
        for item in record.history.item:
            key = item.key or "/".join(item.nested_key)
            row[key] = json.loads(item.value_json)
    return out


def config(path: Path) -> dict[str, Any]:
    """The run's config (the run record's, updated by later config records), key → value."""
    from wandb.proto import wandb_internal_pb2 as pb

    out: dict[str, Any] = {}
    for body in _payloads(path):
        record = pb.Record()
        record.ParseFromString(body)
        kind = record.WhichOneof("record_type")
        items = record.run.config.update if kind == "run" else record.config.update
        if kind in ("run", "config"):
            for item in items:
                out[item.key or "/".join(item.nested_key)] = json.loads(item.value_json)
    return out


def wait_for_history(path: Path, steps: int, timeout_s: float = 60.0) -> dict[int, dict[str, Any]]:
    """:func:`history` once it holds ``steps`` steps: ``run.finish()`` can return before W&B's
    service has written the offline file (it is flushed by then at the latest when the process
    exits); the deadline only bounds a test that would otherwise hang."""
    deadline = time.monotonic() + timeout_s
    while True:
        found = history(path)
        if len(found) >= steps or time.monotonic() > deadline:
            return found
        time.sleep(0.1)
