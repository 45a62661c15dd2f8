"""A stand-in for the leanprover-community/repl process that replays recorded transcripts.

Usage::

    python fake_repl.py DIR NAME [NAME ...] [--hang-on S] [--die-on S]
                             [--garbage-on S] [--accept-prefix S] [--log FILE]

It loads ``DIR/NAME.in`` (requests separated by blank lines) and ``DIR/NAME.expected.out``
(the REPL's replies, each followed by a blank line) and pairs the i-th request with the i-th
reply. Then it speaks the REPL's framing on stdin/stdout: it reads a request up to a blank
line, finds the recorded request with the same ``cmd`` (or ``tactic`` + ``proofState``, or
``path``), searching forward from the last match first so that transcripts replay in order,
and writes the recorded reply bytes and a blank line. Failure modes for the client's error
paths, chosen by a substring of the request's ``cmd``:

- ``--hang-on S``: never answer (the client must kill the process at its deadline);
- ``--die-on S``: exit without answering (a crash);
- ``--garbage-on S``: answer with text that is not JSON;
- ``--accept-prefix S``: answer an unrecorded command starting with ``S`` (a header of
  imports) with ``{"env": n}``, as Lean does for a command that only declares things;
- ``--axioms LIST``: answer an unrecorded ``#print axioms NAME`` command with one ``info``
  message at 1:0 in Lean's documented format (``Lean/Elab/Print.lean``, ``printAxiomsOf``):
  ``'NAME' depends on axioms: [LIST]``, or ``'NAME' does not depend on any axioms`` for an
  empty LIST. This is built from the format, not recorded: no public transcript holds a
  ``#print axioms`` reply of the REPL;
- ``--forget-env-once``: answer the first request that names an ``env`` with
  ``{"message": "Unknown environment."}`` (counted in the ``--log`` file, so across
  restarts), as a REPL that lost its environments would.

An unrecorded request gets ``{"message": "fake_lean_repl: no recorded reply ..."}``, which a
client treats as a refusal, so a test never passes by accident. ``--log FILE`` appends every
received request to FILE, one JSON line each, for tests to inspect.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any


def request_blocks(text: str) -> list[str]:
    """Split a request stream into blocks at blank lines (as the REPL reads stdin)."""
    blocks, current = [], []
    for line in text.splitlines():
        if line.strip():
            current.append(line)
        elif current:
            blocks.append("\n".join(current))
            current = []
    if current:
        blocks.append("\n".join(current))
    return [b for b in blocks if not b.lstrip().startswith(("#", "--"))]


def reply_blocks(text: str) -> list[str]:
    """Split a reply stream into its pretty-printed JSON blocks."""
    return [b.strip("\n") for b in text.split("\n\n") if b.strip()]


def key(request: dict[str, Any]) -> tuple[Any, ...]:
    if "cmd" in request:
        return ("cmd", request["cmd"])
    if "tactic" in request:
        return ("tactic", request["tactic"], request.get("proofState"))
    if "path" in request:
        return ("path", request["path"])
    return ("other", json.dumps(request, sort_keys=True))


def load_pairs(directory: Path, names: list[str]) -> list[tuple[tuple[Any, ...], str]]:
    pairs = []
    for name in names:
        requests = request_blocks((directory / f"{name}.in").read_text(encoding="utf-8"))
        replies = reply_blocks((directory / f"{name}.expected.out").read_text(encoding="utf-8"))
        if len(requests) != len(replies):
            raise SystemExit(f"{name}: {len(requests)} requests but {len(replies)} replies")
        for req, rep in zip(requests, replies, strict=True):
            pairs.append((key(json.loads(req, strict=False)), rep))
    return pairs


def print_axioms_reply(cmd: str, axioms: str, env: int) -> dict[str, Any]:
    """The REPL's reply to ``#print axioms NAME`` in Lean's documented message format."""
    name = cmd[len("#print axioms ") :].strip()
    listed = [a.strip() for a in axioms.split(",") if a.strip()]
    data = (
        f"'{name}' depends on axioms: [{', '.join(listed)}]"
        if listed
        else f"'{name}' does not depend on any axioms"
    )
    message = {
        "severity": "info",
        "pos": {"line": 1, "column": 0},
        "endPos": {"line": 1, "column": len(cmd)},
        "data": data,
    }
    return {"messages": [message], "env": env}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("names", nargs="+")
    parser.add_argument("--hang-on", default=None)
    parser.add_argument("--die-on", default=None)
    parser.add_argument("--garbage-on", default=None)
    parser.add_argument("--accept-prefix", default=None)
    parser.add_argument("--log", default=None)
    parser.add_argument("--forget-env-once", action="store_true")
    parser.add_argument("--axioms", default=None)
    args = parser.parse_args()
    pairs = load_pairs(args.directory, args.names)
    cursor, env_counter = 0, 0
    out = sys.stdout.buffer
    current: list[str] = []

    def answer(block: str) -> None:
        nonlocal cursor, env_counter
        request = json.loads(block, strict=False)
        if args.forget_env_once and "env" in request and args.log:
            seen = Path(args.log).read_text(encoding="utf-8") if Path(args.log).exists() else ""
            if '"env"' not in seen:
                with open(args.log, "a", encoding="utf-8") as f:
                    f.write(json.dumps(request, ensure_ascii=False) + "\n")
                out.write(b'{"message": "Unknown environment."}\n\n')
                out.flush()
                return
        if args.log:
            with open(args.log, "a", encoding="utf-8") as f:
                f.write(json.dumps(request, ensure_ascii=False) + "\n")
        cmd = str(request.get("cmd", ""))
        if args.hang_on and args.hang_on in cmd:
            while True:
                time.sleep(3600)
        if args.die_on and args.die_on in cmd:
            os._exit(3)
        if args.garbage_on and args.garbage_on in cmd:
            out.write(b"this is not json\n\n")
            out.flush()
            return
        k = key(request)
        order = list(range(cursor, len(pairs))) + list(range(cursor))
        match = next((i for i in order if pairs[i][0] == k), None)
        if match is not None:
            cursor = match + 1
            reply = pairs[match][1]
        elif args.accept_prefix and cmd.startswith(args.accept_prefix) and "env" not in request:
            reply = json.dumps({"env": env_counter})
        elif args.axioms is not None and cmd.startswith("#print axioms "):
            reply = json.dumps(print_axioms_reply(cmd, args.axioms, env_counter))
        else:
            reply = json.dumps({"message": f"fake_lean_repl: no recorded reply for {k!r}"})
        if "cmd" in request:
            env_counter += 1
        out.write(reply.encode("utf-8") + b"\n\n")
        out.flush()

    for raw in sys.stdin.buffer:
        line = raw.decode("utf-8")
        if line.strip():
            current.append(line.rstrip("\r\n"))
        elif current:
            answer("\n".join(current))
            current = []
    if current:
        answer("\n".join(current))


if __name__ == "__main__":
    main()
