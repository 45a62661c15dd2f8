"""``KiminaChecker``: checks Lean 4 proofs through a Kimina Lean Server over HTTP.

The Kimina server (project-numina/kimina-lean-server) wraps the same
leanprover-community/repl behind ``POST /api/check`` (``{"snippets": [{"id", "code"}],
"timeout", "debug", "reuse", "infotree"}`` → ``{"results": [{"id", "time", "error"?,
"response"?}]}``) and the legacy ``POST /verify`` (``{"codes": [{"custom_id", "proof"}],
"timeout", "infotree_type", "disable_cache"}``). It has no ``allTactics``: tactic ranges
come from the info tree (``infotree="original"``).

**Header offset.** The server moves the leading ``import`` and blank lines into a separate
header command, elaborates the rest as the body, and then adds the header's line count to
the lines of ``messages`` and ``sorries`` so that they match the submitted snippet, but
(at ``fb2393de``) not to the ``infotree`` ranges, and not to ``sorries`` when ``messages``
is empty (it returns early). :func:`kimina_fix_header_offset` completes that shift; older
servers that shift nothing are handled with ``server_shifts_messages=False``.

HTTP goes through the standard library (``urllib.request``), so the backend adds no
dependency. 429 ("No available REPLs") and 5xx answers and connection errors are retried
with exponential backoff; 401/403 and other 4xx are configuration errors and raise.
"""

from __future__ import annotations

import copy
import dataclasses
import http.client
import json
import math
import os
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from verirl.provers.base import FormalProblem, ProofCheck, Status
from verirl.provers.lean.axioms import (
    print_axioms_command,
    split_axioms_messages,
)
from verirl.provers.lean.options import LeanOptions
from verirl.provers.lean.reply import (
    LeanBackend,
    LeanCheckPlan,
    infotree_items,
    infotree_tactic_ranges,
    parse_repl_reply,
    unchecked_result,
)

URL_ENV_VAR = "VERIRL_KIMINA_URL"
KEY_ENV_VAR = "VERIRL_KIMINA_API_KEY"
Endpoint = Literal["check", "verify"]
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class KiminaError(RuntimeError):
    """A configuration problem: no server URL, a refused API key, a malformed request."""


# ---- the header-offset fix ---------------------------------------------------------------


def kimina_header_line_count(code: str) -> int:
    """How many leading lines the server moves into its header: the lines at the top that are
    blank or start with ``import `` (Kimina's ``split_snippet``)."""
    count = 0
    for line in code.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("import "):
            break
        count += 1
    return count


def _shift_pos(pos: Any, delta: int) -> None:
    if isinstance(pos, dict) and isinstance(pos.get("line"), int) and pos["line"] > 0:
        pos["line"] += delta


def _shift_items(items: Any, delta: int) -> None:
    for item in items or ():
        if isinstance(item, dict):
            _shift_pos(item.get("pos"), delta)
            _shift_pos(item.get("endPos"), delta)


def _shift_infotree(tree: Any, delta: int) -> None:
    for item in infotree_items(tree):
        node = item.get("node")
        if isinstance(node, dict):
            rng = (node.get("stx") or {}).get("range")
            if isinstance(rng, dict):
                _shift_pos(rng.get("start"), delta)
                _shift_pos(rng.get("finish"), delta)


def shift_response_lines(response: Mapping[str, Any], delta: int) -> dict[str, Any]:
    """A copy of a REPL response with every line number (messages, sorries, tactics,
    infotree) moved by ``delta``; line 0 ("no position") stays 0."""
    out = copy.deepcopy(dict(response))
    for key in ("messages", "sorries", "tactics"):
        _shift_items(out.get(key), delta)
    _shift_infotree(out.get("infotree"), delta)
    return out


def kimina_fix_header_offset(
    response: Mapping[str, Any], header_line_count: int, *, server_shifts_messages: bool = True
) -> dict[str, Any]:
    """Complete the server's header shift so that every position is in snippet lines.

    With ``server_shifts_messages`` (the current server), ``messages`` are already shifted,
    ``sorries`` are shifted only when ``messages`` is non-empty, and ``infotree`` never is:
    shift the infotree, and the sorries when there were no messages. Without it (servers
    before the offset logic), shift everything."""
    out = copy.deepcopy(dict(response))
    if header_line_count <= 0:
        return out
    if not server_shifts_messages:
        return shift_response_lines(out, header_line_count)
    _shift_infotree(out.get("infotree"), header_line_count)
    if not out.get("messages"):
        _shift_items(out.get("sorries"), header_line_count)
    return out


# ---- the checker -------------------------------------------------------------------------


class KiminaChecker(LeanBackend):
    """A :class:`~verirl.provers.base.ProofChecker` backed by a Kimina Lean Server.

    Args:
        base_url: e.g. ``"http://127.0.0.1:8000"``; default ``$VERIRL_KIMINA_URL``.
        api_key: sent as ``Authorization: Bearer <key>``; default ``$VERIRL_KIMINA_API_KEY``
            (the server asks for one when ``LEAN_SERVER_API_KEY`` is set on its side).
        endpoint: ``"check"`` (``/api/check``) or the legacy ``"verify"`` (``/verify``).
        infotree: info-tree kind to request for tactic ranges (``"original"``); ``None``
            to skip it (spans then come from the layout splitter).
        reuse: let the server reuse a REPL that already loaded the same header.
        batch_size: snippets per HTTP request in :meth:`check_batch`.
        max_retries, backoff_s, max_backoff_s: retries on 429/5xx/connection errors, waiting
            ``backoff_s · 2^attempt`` (capped; a ``Retry-After`` header wins).
        http_margin_s: added to the Lean timeout for the HTTP deadline (header imports).
        server_shifts_messages: the server applies the header offset to messages (current
            Kimina); ``False`` for older servers that shift nothing.
        options: the :class:`~verirl.provers.lean.options.LeanOptions`, as for
            :class:`~verirl.provers.lean.repl.LeanReplChecker`; keyword arguments named like
            its fields override them. The server runs one snippet
            per proof with no way to send a second command into its environment, so
            ``#print axioms <theorem>`` is appended to the snippet on lines of its own, and
            only the messages on its line are read as its answer.
    """

    name = "kimina"

    def __init__(
        self,
        base_url: str | None = None,
        *,
        options: LeanOptions | None = None,
        api_key: str | None = None,
        endpoint: Endpoint = "check",
        infotree: str | None = "original",
        reuse: bool = True,
        batch_size: int = 8,
        max_retries: int = 4,
        backoff_s: float = 1.0,
        max_backoff_s: float = 30.0,
        http_margin_s: float = 60.0,
        server_shifts_messages: bool = True,
        **lean_options: Any,
    ) -> None:
        base_url = base_url or os.environ.get(URL_ENV_VAR, "")
        if not base_url:
            raise KiminaError(
                f"no Kimina server URL: pass base_url= or set {URL_ENV_VAR} "
                "(start one with project-numina/kimina-lean-server)"
            )
        if endpoint not in ("check", "verify"):
            raise KiminaError(f"endpoint must be 'check' or 'verify', got {endpoint!r}")
        if batch_size < 1:
            raise KiminaError(f"batch_size must be at least 1, got {batch_size}")
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get(KEY_ENV_VAR) or None
        self.endpoint: Endpoint = endpoint
        self.infotree = infotree
        self.reuse = reuse
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.http_margin_s = http_margin_s
        self.server_shifts_messages = server_shifts_messages
        self.options = LeanOptions.build(options, lean_options)

    # ---- HTTP --------------------------------------------------------------------------

    def _post(self, path: str, body: Mapping[str, Any], timeout_s: float) -> Any:
        """POST JSON with retries. Returns the decoded reply; raises ``TimeoutError`` when the
        server did not answer in time, ``ConnectionError`` when retries ran out, and
        :class:`KiminaError` for a refused key or a malformed request."""
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last = ""
        for attempt in range(self.max_retries + 1):
            request = urllib.request.Request(
                self.base_url + path, data=data, headers=headers, method="POST"
            )
            wait = min(self.max_backoff_s, self.backoff_s * 2**attempt)
            try:
                with urllib.request.urlopen(request, timeout=timeout_s) as reply:
                    text = reply.read().decode("utf-8", errors="replace")
                try:
                    return json.loads(text)
                except ValueError:
                    last = f"the reply is not JSON: {text[:120]!r}"
            except urllib.error.HTTPError as exc:
                detail = exc.read().decode("utf-8", errors="replace")[:300]
                if exc.code in (401, 403):
                    raise KiminaError(
                        f"the Kimina server refused the request ({exc.code}): check api_key / "
                        f"{KEY_ENV_VAR}"
                    ) from None
                if exc.code not in _RETRY_STATUSES:
                    raise KiminaError(f"Kimina {path} answered {exc.code}: {detail}") from None
                last = f"HTTP {exc.code}: {detail}"
                retry_after = exc.headers.get("Retry-After") if exc.headers else None
                if retry_after and retry_after.strip().isdigit():
                    wait = min(self.max_backoff_s, float(retry_after))
            except TimeoutError:
                raise TimeoutError(
                    f"no answer from {self.base_url}{path} in {timeout_s:g} s"
                ) from None
            except (urllib.error.URLError, ConnectionError, http.client.HTTPException) as exc:
                reason = getattr(exc, "reason", exc)
                if isinstance(reason, TimeoutError):
                    raise TimeoutError(
                        f"no answer from {self.base_url}{path} in {timeout_s:g} s"
                    ) from None
                last = f"{type(exc).__name__}: {reason}"
            if attempt < self.max_retries:
                time.sleep(wait)
        raise ConnectionError(f"Kimina {path} failed after {self.max_retries + 1} tries ({last})")

    # ---- one chunk of snippets ---------------------------------------------------------

    def _snippet(self, problem: FormalProblem, plan: LeanCheckPlan) -> tuple[str, int, int | None]:
        """The code sent (prelude, blank line, statement + proof, and with the axiom check a
        blank line and ``#print axioms <theorem>``), the number of lines before the
        statement, and the line of the ``#print axioms`` command in ``plan.code``
        coordinates (None when it is not sent)."""
        prelude = problem.prelude.rstrip()
        header = prelude + "\n\n" if prelude else ""
        constant = self._axioms_target(problem) if self.check_axioms else None
        if constant is None:
            return header + plan.code, header.count("\n"), None
        axioms_line = plan.code.count("\n") + 3
        snippet = f"{header}{plan.code}\n\n{print_axioms_command(constant)}"
        return snippet, header.count("\n"), axioms_line

    def _request_body(self, snippets: list[tuple[str, str]], timeout_s: float) -> dict[str, Any]:
        timeout = max(1, math.ceil(timeout_s))
        if self.endpoint == "check":
            body: dict[str, Any] = {
                "snippets": [{"id": i, "code": c} for i, c in snippets],
                "timeout": timeout,
                "debug": False,
                "reuse": self.reuse,
            }
            if self.infotree:
                body["infotree"] = self.infotree
            return body
        body = {
            "codes": [{"custom_id": i, "proof": c} for i, c in snippets],
            "timeout": timeout,
            "disable_cache": not self.reuse,
        }
        if self.infotree:
            body["infotree_type"] = self.infotree
        return body

    def _result_check(
        self,
        problem: FormalProblem,
        plan: LeanCheckPlan,
        result: Mapping[str, Any],
        snippet: str,
        prefix_lines: int,
        axioms_line: int | None,
    ) -> ProofCheck:
        raw = {"result": dict(result), "backend_version": self.backend_version}
        response = result.get("response")
        elapsed = result.get("time")
        if isinstance(response, Mapping) and elapsed is None:
            elapsed = response.get("time")  # the legacy endpoint folds time into the response
        elapsed_s = float(elapsed) if isinstance(elapsed, (int, float)) else 0.0
        error = result.get("error")
        if error:
            status: Status = "timeout" if "timed out" in str(error).lower() else "crash"
            return unchecked_result(
                plan, status, backend=self.name, detail=str(error), elapsed_s=elapsed_s, raw=raw
            )
        if not isinstance(response, Mapping):
            return unchecked_result(
                plan,
                "crash",
                backend=self.name,
                elapsed_s=elapsed_s,
                raw=raw,
                detail="the Kimina server returned neither a response nor an error",
            )
        body = {k: v for k, v in response.items() if k != "time"}
        fixed = kimina_fix_header_offset(
            body,
            kimina_header_line_count(snippet),
            server_shifts_messages=self.server_shifts_messages,
        )
        local = shift_response_lines(fixed, -prefix_lines)  # snippet lines → code lines
        try:
            reply = parse_repl_reply(local, require_env=False)
        except ValueError as exc:
            return unchecked_result(
                plan, "crash", backend=self.name, detail=str(exc), elapsed_s=elapsed_s, raw=raw
            )
        ranges = infotree_tactic_ranges(local.get("infotree"), plan.code)
        command_messages: list[Any] = []
        if axioms_line is not None:
            proof_messages, command_messages = split_axioms_messages(reply.messages, axioms_line)
            reply = dataclasses.replace(reply, messages=tuple(proof_messages))
        check = self._built(plan, reply, elapsed_s=elapsed_s, raw=raw, lean_ranges=ranges)
        if check.passed and self.check_axioms:
            check = self._axioms_verdict(problem, check, command_messages)
        return check

    def _check_chunk(
        self, chunk: list[tuple[int, FormalProblem, LeanCheckPlan]], timeout_s: float
    ) -> dict[int, ProofCheck]:
        snippets = {f"{i}-{p.name}": (i, p, plan, *self._snippet(p, plan)) for i, p, plan in chunk}
        body = self._request_body([(sid, v[3]) for sid, v in snippets.items()], timeout_s)
        path = "/api/check" if self.endpoint == "check" else "/verify"
        http_timeout = self.http_margin_s + timeout_s * len(snippets)
        out: dict[int, ProofCheck] = {}
        start = time.monotonic()
        try:
            reply = self._post(path, body, http_timeout)
        except (TimeoutError, ConnectionError) as exc:
            status: Status = "timeout" if isinstance(exc, TimeoutError) else "crash"
            for i, _, plan, *_ in snippets.values():
                out[i] = unchecked_result(
                    plan,
                    status,
                    backend=self.name,
                    detail=str(exc),
                    elapsed_s=time.monotonic() - start,
                )
            return out
        results = reply.get("results") if isinstance(reply, Mapping) else None
        by_id = {}
        for result in results or ():
            if isinstance(result, Mapping):
                by_id[str(result.get("id", result.get("custom_id")))] = result
        for sid, (i, problem, plan, snippet, prefix_lines, axioms_line) in snippets.items():
            if sid in by_id:
                out[i] = self._result_check(
                    problem, plan, by_id[sid], snippet, prefix_lines, axioms_line
                )
            else:
                out[i] = unchecked_result(
                    plan,
                    "crash",
                    backend=self.name,
                    raw={"reply": reply},
                    detail=f"the Kimina server returned no result for snippet {sid!r}",
                )
        return out

    # ---- the ProofChecker interface -------------------------------------------------------

    def check(self, problem: FormalProblem, proof: str, *, timeout_s: float = 15.0) -> ProofCheck:
        """Check one proof (see :meth:`check_batch`)."""
        return self.check_batch([(problem, proof)], timeout_s=timeout_s)[0]

    def check_batch(
        self, items: Sequence[tuple[FormalProblem, str]], *, timeout_s: float = 15.0
    ) -> list[ProofCheck]:
        """Check proofs, ``batch_size`` snippets per request (the server runs them in
        parallel). Rejected proofs are answered locally and never sent. Never raises on
        model output; raises :class:`KiminaError` for a refused key or a malformed request."""
        results: dict[int, ProofCheck] = {}
        pending: list[tuple[int, FormalProblem, LeanCheckPlan]] = []
        for i, (problem, proof) in enumerate(items):
            plan = self._plan(problem, proof)
            if plan.rejection is not None:
                results[i] = self._rejected(plan)
            else:
                pending.append((i, problem, plan))
        for k in range(0, len(pending), self.batch_size):
            results.update(self._check_chunk(pending[k : k + self.batch_size], timeout_s))
        return [results[i] for i in range(len(items))]

    def close(self) -> None:
        """Nothing to release: every request opens its own connection."""
