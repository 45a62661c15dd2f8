"""The two sides of a *checked* run of :mod:`verirl.sandbox` (loaded by ``_runner.py``).

A checked run splits what used to be one program into two processes that the runner forks:

- the **candidate** process runs the untrusted program, then serves calls to one function of
  it (:func:`serve_candidate`): it reads a call (arguments) from its socket, calls the
  function, writes back the returned value or the exception's ``Type: message``;
- the **checker** process runs trusted checking code (:func:`run_checker`), in which the
  name ``candidate`` is a proxy that sends each call to the candidate process and returns the
  decoded answer. When the checking code runs to its end without raising, the checker writes
  ``<nonce> done`` on its report channel; ``report(value)`` writes ``<nonce> <json>`` lines
  before that.

Values cross the candidate's socket as plain data only (:func:`encode` / :func:`decode`):
``None``, ``bool``, ``int``, ``float``, ``str``, ``bytes``, ``complex`` and lists, tuples,
dicts, sets and frozensets of them. The checker never runs a line of the candidate's code and
never unpickles anything: an object that "equals everything" cannot cross, a reply is bounded
in size and depth, and anything malformed raises :class:`CandidateError` in the checking code.
The threat model is in ``_runner.py`` and ``docs/security.md``.

Standard library only; this file is read and executed once by the runner at start-up (never
imported through ``sys.path``, which a program could write to).
"""

# A standalone file loaded by the runner; it keeps to the runner's style (see _runner.py).
# ruff: noqa: UP031

import json
import os
import select
import sys


class CandidateError(Exception):
    """A call to the candidate failed: it raised, or its reply was not a plain value."""


class CandidateLoadError(CandidateError):
    """The candidate's program did not load (it raised, exited, or lacks the function)."""


class CandidateGone(CandidateError):
    """The candidate process ended (exited, was killed, or closed its end) before answering."""


for _cls in (CandidateError, CandidateLoadError, CandidateGone):
    _cls.__module__ = "builtins"  # tracebacks read "CandidateGone: ...", not a module path

_MAX_DEPTH = 200


# ---- plain values on the wire ------------------------------------------------------------------
def encode(value, depth=0):
    """A JSON-able form of a plain value: JSON's own types for None/bool/int/float/str/list,
    a one-key object for the others (``{"t": [...]}`` a tuple, ``{"d": [[k, v], ...]}`` a dict,
    ``{"s": ...}`` a set, ``{"f": ...}`` a frozenset, ``{"b": hex}`` bytes, ``{"c": [re, im]}``
    a complex). Subclasses travel as their base type; anything else raises TypeError."""
    if depth > _MAX_DEPTH:
        raise ValueError("value nested too deeply")
    if value is None or value is True or value is False:
        return value
    d = depth + 1
    if isinstance(value, int):
        return int.__index__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, list):
        return [encode(v, d) for v in list.__iter__(value)]
    if isinstance(value, tuple):
        return {"t": [encode(v, d) for v in tuple.__iter__(value)]}
    if isinstance(value, dict):
        return {"d": [[encode(k, d), encode(v, d)] for k, v in dict.items(value)]}
    if isinstance(value, frozenset):
        return {"f": [encode(v, d) for v in frozenset.__iter__(value)]}
    if isinstance(value, set):
        return {"s": [encode(v, d) for v in set.__iter__(value)]}
    if isinstance(value, bytes | bytearray):
        return {"b": bytes(value).hex()}
    if isinstance(value, complex):
        return {"c": [complex.__complex__(value).real, complex.__complex__(value).imag]}
    raise TypeError("cannot pass a value of type %s (plain data only)" % type(value).__name__)


def decode(obj, depth=0):
    """The value :func:`encode` made ``obj`` from; ValueError for anything else (the input
    is untrusted: only the exact shapes above are accepted)."""
    if depth > _MAX_DEPTH:
        raise ValueError("value nested too deeply")
    t = type(obj)
    if obj is None or t is bool or t is int or t is float or t is str:
        return obj
    d = depth + 1
    if t is list:
        return [decode(v, d) for v in obj]
    if t is dict and len(obj) == 1:
        ((tag, inner),) = obj.items()
        if tag == "b" and type(inner) is str:
            return bytes.fromhex(inner)
        if type(inner) is not list:
            raise ValueError("malformed value")
        if tag == "t":
            return tuple(decode(v, d) for v in inner)
        if tag == "s":
            return {decode(v, d) for v in inner}
        if tag == "f":
            return frozenset(decode(v, d) for v in inner)
        if tag == "c" and len(inner) == 2 and all(type(x) in (int, float) for x in inner):
            return complex(inner[0], inner[1])
        if tag == "d":
            out = {}
            for pair in inner:
                if type(pair) is not list or len(pair) != 2:
                    raise ValueError("malformed dict")
                out[decode(pair[0], d)] = decode(pair[1], d)
            return out
    raise ValueError("malformed value")


def _send(fd, obj):
    data = (json.dumps(obj) + "\n").encode("utf-8")
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _error_text(exc):
    try:
        text = str(exc)
        return ("%s: %s" % (type(exc).__name__, text) if text else type(exc).__name__)[:300]
    except BaseException:
        return type(exc).__name__[:300]


# ---- the candidate's side ----------------------------------------------------------------------
def serve_candidate(compiled, entry, fd):
    """Run the program (``compiled``, or the exception its compilation raised), say
    ``ready`` or why it did not load, then answer calls to ``entry`` until the checker
    closes its end. Runs in the untrusted process: nothing here is relied on."""
    import io

    glb = {"__name__": "__main__", "__builtins__": __builtins__}
    try:
        if isinstance(compiled, BaseException):
            raise compiled
        exec(compiled, glb)
        fn = glb.get(entry)
        if not callable(fn):
            raise NameError("the program does not define a function %r" % entry)
    except BaseException as exc:
        _send(fd, {"load": _error_text(exc)})
        return
    _send(fd, {"ready": True})
    reader = io.BufferedReader(io.FileIO(fd, "rb", closefd=False), 1 << 16)
    while True:
        line = reader.readline()
        if not line:
            return
        try:
            call = json.loads(line)
            args = decode(call["a"])
            kwargs = decode(call["k"])
            out = {"r": encode(fn(*args, **kwargs))}
            reply = json.dumps(out)
        except BaseException as exc:
            reply = json.dumps({"e": _error_text(exc)})
        data = (reply + "\n").encode("utf-8")
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]


# ---- the checker's side ------------------------------------------------------------------------
class _Candidate:
    """The proxy named ``candidate`` in the checking code: ``candidate(*args, **kwargs)``
    makes one call; ``candidate.map(arg_lists)`` sends all calls at once (pipelined) and
    yields ``(True, value)`` or ``(False, "Type: message")`` per call as the answers come."""

    def __init__(self, fd, reply_bound):
        self._fd = fd
        self._bound = reply_bound
        self._buf = bytearray()
        self._state = None  # None: hello not read yet; True: ready; else the load error
        self._gone = None

    def _fail(self, why):
        if self._gone is None:
            self._gone = why
        raise CandidateGone(self._gone)

    def _take_line(self):
        """The next complete line of the answers read so far, or None."""
        i = self._buf.find(b"\n")
        if i < 0:
            if len(self._buf) > self._bound:
                self._fail("the program's answer was larger than %d bytes" % self._bound)
            return None
        if i > self._bound:
            self._fail("the program's answer was larger than %d bytes" % self._bound)
        line = bytes(self._buf[:i])
        del self._buf[: i + 1]
        return line

    def _read_more(self):
        try:
            chunk = os.read(self._fd, 1 << 16)
        except BlockingIOError:
            return
        except OSError as exc:
            self._fail("the program's channel failed: %s" % exc)
        if not chunk:
            self._fail("the program ended before answering")
        self._buf += chunk

    def _message(self):
        if self._gone is not None:
            raise CandidateGone(self._gone)
        line = self._take_line()
        while line is None:
            self._read_more()
            line = self._take_line()
        return _parse(line)

    def _hello(self):
        if self._state is None:
            msg = self._message()
            if msg.get("ready") is True:
                self._state = True
            elif type(msg.get("load")) is str:
                self._state = msg["load"]
            else:
                raise CandidateError("malformed answer from the program")
        if self._state is not True:
            raise CandidateLoadError(self._state)
        if self._gone is not None:
            raise CandidateGone(self._gone)

    def __call__(self, *args, **kwargs):
        self._hello()
        try:
            _send(self._fd, _call(args, kwargs))
        except OSError:
            self._fail("the program ended before answering")
        return _answer(self._message())

    def map(self, arg_lists):
        if self._state is not None:
            self._hello()  # raises for a program that did not load or is gone
        out = bytearray()
        for args in arg_lists:
            out += (json.dumps(_call(args, {})) + "\n").encode("utf-8")
        todo = len(arg_lists)
        fd = self._fd
        os.set_blocking(fd, False)
        try:
            while todo:
                line = self._take_line()
                if line is not None and self._state is None:
                    # the program's hello, read here so the calls need not wait for it
                    self._buf[:0] = line + b"\n"
                    self._hello()
                    continue
                if line is not None:
                    todo -= 1
                    try:
                        yield True, _answer(_parse(line))
                    except CandidateError as exc:
                        yield False, str(exc)
                    continue
                ready, writable, _ = select.select([fd], [fd] if out else [], [])
                if writable:
                    try:
                        del out[: os.write(fd, out)]
                    except BlockingIOError:
                        pass
                    except OSError:
                        out = bytearray()  # it stopped reading: take what it answered
                if ready:
                    self._read_more()
        finally:
            os.set_blocking(fd, True)


def _call(args, kwargs):
    return {"a": encode(list(args)), "k": encode(dict(kwargs))}


def _parse(line):
    try:
        msg = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise CandidateError("malformed answer from the program") from exc
    if type(msg) is not dict or len(msg) != 1:
        raise CandidateError("malformed answer from the program")
    return msg


def _answer(msg):
    if "e" in msg:
        raise CandidateError(str(msg["e"])[:300])
    if "r" not in msg:
        raise CandidateError("malformed answer from the program")
    try:
        return decode(msg["r"])
    except (ValueError, TypeError, RecursionError) as exc:
        # TypeError: an unhashable value as a set member or dict key
        raise CandidateError("malformed answer from the program: %s" % exc) from None


def run_checker(compiled, data, fd, report_fd, nonce, reply_bound):
    """Run the checking code with ``candidate``, ``data`` and ``report`` in its namespace;
    write ``<nonce> done`` only when it ran to its end. Returns the exit code."""
    prefix = nonce + " "

    def report(value):
        """Send a JSON-able value to the caller (``Execution.reports``)."""
        line = (prefix + json.dumps(value) + "\n").encode("utf-8")
        view = memoryview(line)
        while view:
            view = view[os.write(report_fd, view) :]

    ns = {
        "__name__": "__checker__",
        "__builtins__": __builtins__,
        "candidate": _Candidate(fd, reply_bound),
        "data": data,
        "report": report,
        "CandidateError": CandidateError,
        "CandidateLoadError": CandidateLoadError,
        "CandidateGone": CandidateGone,
    }
    try:
        exec(compiled, ns)
    except BaseException as exc:
        try:
            import traceback  # only on failure: importing it costs a fork's worth of time

            # the checking code's own frames, then the error's one line
            tb = traceback.extract_tb(exc.__traceback__)
            frames = [f for f in tb if f.filename == "checker.py"]
            text = "".join(traceback.format_list(frames))
            sys.stderr.write("Traceback (checker):\n" + text + _error_text(exc) + "\n")
            sys.stderr.flush()
        except BaseException:
            pass
        return 1
    done = (prefix + "done\n").encode("ascii")
    view = memoryview(done)
    while view:
        view = view[os.write(report_fd, view) :]
    return 0
