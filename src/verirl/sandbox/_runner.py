"""The warm runner ("zygote") of :mod:`verirl.sandbox`: one long-lived interpreter that forks a
fresh child per execution.

This file is run on its own (``python -I -S -B _runner.py UID ROOT WIPE PIDNS PRELOAD``)
inside the isolation layer; it imports only the standard library. It reads one JSON request
per line on stdin and answers one JSON line on stdout. For each request it

1. makes a fresh directory under ``ROOT`` owned by the execution user ``UID`` and compiles
   the program (up to 256 KiB; a compile error is raised in the child as if it ran there);
2. forks a child that starts a new session (its own process group), applies the resource
   limits (CPU time, address space, file size, open files, process count, no core dumps),
   drops to ``UID`` (when the runner is root; ``no_new_privs`` and the minimal environment
   are set once in the runner and inherited), changes into the directory and runs the
   program with ``exec`` (the interpreter is already started, so an execution costs a fork,
   not a start-up);
3. reads the child's stdout/stderr up to a byte bound, and kills the whole process group
   when the wall-time limit passes or the output bound is crossed;
4. afterwards kills every process left running as ``UID`` (a reaper child that becomes
   ``UID`` and signals ``-1``: detached grandchildren that left the process group die too),
   and deletes the directory and anything written to ``/tmp`` and ``/dev/shm``.

What a fork costs decides the speed of a warm execution. On a virtual machine every
copy-on-write page fault is expensive (5-8 us measured on a Firecracker VM, where a child
that merely compiles a 4-line program takes ~220 faults, 2.3 ms), so the runner does in its
own pages what a child would otherwise copy: compiling, making the child's standard streams,
setting no_new_privs and the environment, and it imports no module (``threading``) that adds
work to every fork.

The verdict names why a run ended: ok, error (non-zero exit or an exception), timeout (wall
time), cpu_time (SIGXCPU), memory (MemoryError or allocation failure), output_limit,
file_size (SIGXFSZ), killed (another signal).

Requests arrive on a socket (fd 0 and 1, never pipes: a socket cannot be opened through
``/proc/PID/fd``) as a 32-byte header ``"<len(json)> <len(checker)>\n"``, the JSON and, for a
*checked run*, the checker's text. A checked run (:func:`run_checked`; protocol in
``_checked.py``) is how a verdict is made unforgeable. Threat model: the program is hostile,
knows this source, and can do anything in its process (patch builtins, walk frames and gc,
read its own memory and ``/proc/self/fd``, write to, close or duplicate any descriptor, fork
children that outlive it, signal itself or every process it may, exit by any route, return
objects equal to everything). What holds against that:

- the program runs in the *candidate* process and the trusted checking code in a separate
  *checker* process; only plain data crosses between them (``_checked.encode``/``decode``);
- only the checker holds the report pipe, made after the candidate was forked; the verdict
  counts a line only with the run's nonce, drawn with ``os.urandom`` after the candidate was
  forked (so never in its memory), and ``checked`` needs ``<nonce> done``, which the checker
  writes only after the checking code returned;
- the runner and the checker are not dumpable: a program without CAP_SYS_PTRACE cannot attach
  to them, read their memory, open their ``/proc/PID/fd`` or ``pidfd_getfd`` their
  descriptors, even as the same user;
- the checker's text reaches the checker process through one scratch buffer that is zeroed
  after each chunk, after the candidate exists: no candidate, now or later, has it in memory;
- when the checker ends, the candidate and everything it left running is killed.

``docs/security.md`` has the full argument, the attack table and what this does not cover
(callers that are not root, answers that are simply right).
"""

# A standalone script that imports as little as it can; the style rules below would add imports.
# ruff: noqa: SIM105, UP031, I001, RUF059

import fcntl
import json
import os
import resource
import select
import shutil
import signal
import sys
import time

# warm imports: children inherit them already loaded. Only modules that keep a fork cheap:
# `threading` (and what imports it: subprocess, queue, ...) registers at-fork work that
# measured 0.6 ms per fork here, more than the rest of an execution.
import bisect  # noqa: F401
import collections  # noqa: F401
import functools  # noqa: F401
import heapq  # noqa: F401
import io
import itertools  # noqa: F401
import math  # noqa: F401
import re  # noqa: F401
import string  # noqa: F401
import typing  # noqa: F401

# Under bwrap the Python installation is mounted readable, so anything else a program imports
# loads on demand. In the unshare and rlimits modes the execution user may be unable to read
# the installation (e.g. under /root), so later imports would fail: there the runner loads
# more of the standard library once (its argv[5] == "1"), at the cost of slower forks.
_MORE = (
    "array",
    "cmath",
    "copy",
    "dataclasses",
    "datetime",
    "decimal",
    "enum",
    "fractions",
    "hashlib",
    "json",
    "numbers",
    "operator",
    "random",
    "statistics",
    "struct",
    "textwrap",
    "unicodedata",
    "socket",
    "glob",
    "subprocess",
    "threading",
    "tempfile",
    "shutil",
    "pathlib",
    "signal",
    "contextlib",
    "fnmatch",
    "csv",
    "pickle",
    "queue",
    "weakref",
    "difflib",
    "pprint",
    "secrets",
    "uuid",
    "inspect",
    "ast",
    "argparse",
    "calendar",
    "locale",
    "warnings",
    "collections.abc",
    "abc",
    "types",
    "zlib",
    "base64",
    "traceback",
)


def _preload_more():
    for name in _MORE:
        try:
            __import__(name)
        except ImportError:
            pass


MB = 1024 * 1024


try:
    import ctypes

    _LIBC = ctypes.CDLL(None, use_errno=True)
except Exception:  # no ctypes: no_new_privs is skipped (setuid already drops privileges)
    _LIBC = None  # type: ignore[assignment]


def _set_dumpable(flag):
    if _LIBC is not None:
        try:
            _LIBC.prctl(4, flag, 0, 0, 0)  # PR_SET_DUMPABLE
        except Exception:
            pass


def _no_new_privs():
    if _LIBC is not None:
        try:
            _LIBC.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
        except Exception:
            pass


def _limit(which, value):
    try:
        resource.setrlimit(which, (value, value))
    except (ValueError, OSError):
        soft, hard = resource.getrlimit(which)
        if hard == resource.RLIM_INFINITY or value <= hard:
            resource.setrlimit(which, (value, hard))


# The child's standard streams, made once in the runner on the descriptor numbers 0, 1 and 2
# (which the child points at its pipes) and never used by the runner itself: a child that
# built them anew would pay ~150 copy-on-write page faults, about 1 ms here.
_STREAMS = None


def _streams():
    global _STREAMS
    if _STREAMS is None:
        _STREAMS = (
            io.TextIOWrapper(io.FileIO(0, "rb", closefd=False), encoding="utf-8"),
            io.TextIOWrapper(
                io.FileIO(1, "wb", closefd=False), encoding="utf-8", write_through=True
            ),
            io.TextIOWrapper(
                io.FileIO(2, "wb", closefd=False), encoding="utf-8", write_through=True
            ),
        )
    return _STREAMS


# Programs up to this size are compiled by the runner before it forks: compiling in a fresh
# fork costs ~200 copy-on-write page faults (2.3 ms on this kind of machine for a 4-line
# program) against 0.2 ms in the runner, whose pages are its own. Compiling is bounded work
# (CPython limits constant folding and nesting); a larger program compiles in the child.
_COMPILE_IN_RUNNER_MAX = 256 * 1024


def _compile(req):
    code = req["code"]
    if len(code) > _COMPILE_IN_RUNNER_MAX:
        return None
    try:
        return compile(code, "main.py", "exec", dont_inherit=True)
    except Exception as exc:  # SyntaxError, ValueError (null bytes), RecursionError, ...
        return exc  # raised in the child, so the program's error reads as if it ran


def _enter(lim, uid, workdir, fds):
    """In a freshly forked child: a new session, the descriptors ``fds`` (target -> source)
    and nothing else, the resource limits, the execution user, the directory."""
    os.setsid()
    # move every source out of the way first, so no dup2 overwrites a source still needed
    moved = {target: fcntl.fcntl(source, fcntl.F_DUPFD, 256) for target, source in fds.items()}
    for target, source in moved.items():
        os.dup2(source, target)
    os.closerange(max(fds) + 1, 65536)
    cpu = max(1, int(lim["cpu_s"] + 0.999))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    _limit(resource.RLIMIT_AS, int(lim["memory_mb"] * MB))
    _limit(resource.RLIMIT_FSIZE, int(lim["file_size_mb"] * MB))
    _limit(resource.RLIMIT_NOFILE, int(lim["open_files"]))
    _limit(resource.RLIMIT_CORE, 0)
    runner_is_root = os.getuid() == 0
    if runner_is_root and uid != 0:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    elif workdir is not None:
        # the runner is not dumpable (see main()); a program that shares its user gets its
        # own /proc entries back, so the process count below sees its processes as before
        _set_dumpable(1)
    # the process budget counts every process of the (now unprivileged) user; a runner that
    # is not root shares its user with the caller, so the budget starts from what runs now
    # (a root runner's execution user has nothing running: every run ends with a reap)
    base = 0
    if not runner_is_root:
        base = _processes_of(os.getuid())
    _limit(resource.RLIMIT_NPROC, base + int(lim["processes"]))
    if workdir is not None:
        os.chdir(workdir)
        # the environment is the runner's minimal one (set once in main()) plus the directory
        env = os.environ
        env["HOME"] = env["TMPDIR"] = workdir


def _child(req, compiled, uid, workdir, out_w, err_w, in_r):
    _enter(req["limits"], uid, workdir, {0: in_r, 1: out_w, 2: err_w})
    sys.stdin, sys.stdout, sys.stderr = _streams()
    sys.argv = ["main.py", *req.get("argv", [])]
    code = 0
    try:
        glb = {"__name__": "__main__", "__builtins__": __builtins__}
        if compiled is None:
            compiled = compile(req["code"], "main.py", "exec", dont_inherit=True)
        elif isinstance(compiled, BaseException):
            raise compiled
        exec(compiled, glb)
    except SystemExit as exc:
        c = exc.code
        code = c if isinstance(c, int) else (0 if c is None else 1)
        if not isinstance(c, int) and c is not None:
            try:
                sys.stderr.write(str(c) + "\n")
            except Exception:
                pass
    except MemoryError:
        try:
            os.write(2, b"\nMemoryError\n")
        except Exception:
            pass
        code = 137
    except BaseException:
        try:
            import traceback

            traceback.print_exc()
        except Exception:
            pass
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    os._exit(code & 0xFF)


def _processes_of(uid):
    n = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat("/proc/" + name).st_uid == uid:
                    n += 1
            except OSError:
                pass
    return n


def _kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def _others_alive(uid=None):
    """Live (not yet dead) processes other than the namespace's init and the runner: every
    one in our PID namespace, or with ``uid`` only those of that user."""
    me = os.getpid()
    n = 0
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in (1, me):
            continue
        try:
            if uid is not None and os.stat("/proc/" + name).st_uid != uid:
                continue
            with open("/proc/%s/stat" % name) as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X"):
            n += 1
    return n


def _reap_namespace(deadline_s=5.0):
    """In a PID namespace of our own every process but the namespace's init and the runner is
    a leftover of the execution (detached or not): signal -1 kills exactly those; repeat until
    none is alive (a fork bomb's last children may still be spawning)."""
    end = time.monotonic() + deadline_s
    while True:
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
        _collect_zombies()
        if not _others_alive() or time.monotonic() > end:
            return
        time.sleep(0.001)


def _reap_user(uid, deadline_s=5.0):
    """Kill every process of ``uid``: a reaper child becomes ``uid`` and signals -1 (which
    spares the sender), repeated until none is alive. Only when the runner itself is another
    user (root), else it would kill us."""
    if os.getuid() != 0 or uid == 0:
        return
    end = time.monotonic() + deadline_s
    while True:
        pid = os.fork()
        if pid == 0:
            try:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                os.kill(-1, signal.SIGKILL)
            except OSError:
                pass
            os._exit(0)
        os.waitpid(pid, 0)
        _collect_zombies()  # orphans come back to the runner (a child subreaper)
        if not _others_alive(uid) or time.monotonic() > end:
            return
        time.sleep(0.001)


def _wipe(path):
    try:
        for name in os.listdir(path):
            p = os.path.join(path, name)
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p, ignore_errors=True)
            else:
                try:
                    os.unlink(p)
                except OSError:
                    pass
    except OSError:
        pass


def _collect_zombies():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def run_one(req, uid, root, counter, wipe_shared, pidns):
    lim = req["limits"]
    workdir = os.path.join(root, "run%d" % counter)
    os.mkdir(workdir, 0o700)
    if os.getuid() == 0 and uid != 0:
        os.chown(workdir, uid, uid)
    stdin_data = req.get("stdin", "").encode("utf-8")
    compiled = _compile(req)
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(in_w)
            os.close(out_r)
            os.close(err_r)
            _child(req, compiled, uid, workdir, out_w, err_w, in_r)
        finally:
            os._exit(120)
    os.close(in_r)
    os.close(out_w)
    os.close(err_w)
    bound = int(lim["output_bytes"])
    bufs = {out_r: bytearray(), err_r: bytearray()}
    open_fds = [out_r, err_r]
    deadline = t0 + float(lim["wall_s"])
    reason = None
    pending = memoryview(stdin_data)
    wfds = [in_w] if pending else []
    if not pending:
        os.close(in_w)
    while open_fds or wfds:
        left = deadline - time.monotonic()
        if left <= 0:
            reason = "timeout"
            break
        r, w, _ = select.select(open_fds, wfds, [], min(left, 0.5))
        for fd in w:
            try:
                n = os.write(fd, pending[:65536])
                pending = pending[n:]
            except OSError:
                pending = pending[:0]
            if not pending:
                os.close(fd)
                wfds = []
        for fd in r:
            chunk = os.read(fd, 65536)
            if not chunk:
                open_fds.remove(fd)
                os.close(fd)
                continue
            buf = bufs[fd]
            room = bound - len(buf)
            buf += chunk[: max(0, room)]
            if len(chunk) > room:
                reason = "output_limit"
        if reason:
            break
    if wfds:
        os.close(in_w)
    if reason == "timeout":
        try:  # it may have ended on its own just as the deadline passed: say why it ended
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                reason = None
        except ChildProcessError:
            pass
    _kill_group(pid)
    _, status, ru = os.wait4(pid, 0)
    wall = time.monotonic() - t0
    for fd in open_fds:
        os.close(fd)
    _clean_up(uid, workdir, wipe_shared, pidns)
    stdout = bytes(bufs[out_r]).decode("utf-8", "replace")
    stderr = bytes(bufs[err_r]).decode("utf-8", "replace")
    exit_code, sig, why = _ended(status, ru, lim, stderr)
    return {
        "status": reason or why,
        "exit_code": exit_code,
        "signal": sig,
        "stdout": stdout,
        "stderr": stderr,
        "wall_s": wall,
    }


def _clean_up(uid, workdir, wipe_shared, pidns):
    if pidns:
        _reap_namespace()
    else:
        _reap_user(uid)
    _collect_zombies()
    try:
        os.rmdir(workdir)  # the common case: the program left nothing behind
    except OSError:
        shutil.rmtree(workdir, ignore_errors=True)
    if wipe_shared:
        _wipe("/tmp")
        _wipe("/dev/shm")


def _ended(status, ru, lim, stderr):
    """(exit code, signal, why it ended) of a wait status."""
    exit_code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    tail = stderr.rstrip().splitlines()[-1:] if stderr.strip() else []
    if sig == signal.SIGXCPU or (
        sig == signal.SIGKILL and ru.ru_utime + ru.ru_stime >= lim["cpu_s"]
    ):
        why = "cpu_time"
    elif sig == signal.SIGXFSZ:
        why = "file_size"
    elif tail and ("MemoryError" in tail[0] or "Cannot allocate memory" in tail[0]):
        why = "memory"
    elif sig is not None:
        why = "killed"
    elif exit_code == 0:
        why = "ok"
    else:
        why = "error"
    return exit_code, sig, why


# ---- checked runs (see _checked.py and the module docstring) --------------------------------
def _load_checked():
    """``_checked.py`` beside this file, executed once at start-up as a module object (never
    through ``sys.path``: a program may be able to write files where a path entry points)."""
    import types

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_checked.py")
    mod = types.ModuleType("verirl_sandbox_checked")
    mod.__file__ = path
    with open(path, encoding="utf-8") as fh:
        code = compile(fh.read(), path, "exec", dont_inherit=True)
    exec(code, mod.__dict__)
    return mod


_CHECKED = None
# bytes of the current request's checker not yet read from the caller (see _forward)
_UNREAD = [0]
# the one buffer a checker's bytes pass through on their way to the checker process; zeroed
# after each chunk, so no program forked later finds them in the runner's memory
_SCRATCH = bytearray(1 << 16)


def _read_exact(fd, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = os.read(fd, min(n - len(buf), 1 << 20))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _forward(sock, deadline):
    """Pass the request's checker bytes from the caller (fd 0) to ``sock`` (the checker
    process's end) through the zeroed scratch buffer; if the checker is gone, read and drop
    them (the caller's stream stays in step)."""
    import socket

    view = memoryview(_SCRATCH)
    while _UNREAD[0] > 0:
        got = os.readv(0, [view[: min(_UNREAD[0], len(view))]])
        if got == 0:
            raise EOFError("the caller closed the connection mid-request")
        _UNREAD[0] -= got
        if sock is not None:
            try:
                sock.settimeout(max(0.01, deadline - time.monotonic()))
                sock.sendall(view[:got], socket.MSG_NOSIGNAL)
            except OSError:
                sock = None
        view[:got] = bytes(got)


def _candidate_child(req, compiled, uid, workdir, chan, err_w):
    null = os.open(os.devnull, os.O_RDWR)
    _enter(req["limits"], uid, workdir, {0: null, 1: null, 2: err_w, 3: chan})
    sys.stdin, sys.stdout, sys.stderr = _streams()
    sys.argv = ["main.py"]
    if compiled is None:
        try:
            compiled = compile(req["code"], "main.py", "exec", dont_inherit=True)
        except Exception as exc:
            compiled = exc
    try:
        _CHECKED.serve_candidate(compiled, req["entry"], 3)
    finally:
        try:
            sys.stderr.flush()
        except Exception:
            pass
        os._exit(0)


def _checker_child(req, uid, chan, rep_w, err_w, src, nonce):
    null = os.open(os.devnull, os.O_RDWR)
    _enter(req["limits"], uid, None, {0: null, 1: null, 2: err_w, 3: chan, 4: rep_w, 5: src})
    _set_dumpable(0)  # explicit: a change of user keeps it dumpable where suid_dumpable=1
    os.chdir("/")
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # a vanished candidate is an error, not death
    sys.stdin, sys.stdout, sys.stderr = _streams()
    code = 1
    try:
        chunks = []
        while True:
            chunk = os.read(5, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(5)
        source = b"".join(chunks).decode("utf-8")
        del chunks
        compiled = compile(source, "checker.py", "exec", dont_inherit=True)
        del source
        bound = int(req["limits"]["output_bytes"])
        code = _CHECKED.run_checker(compiled, req.get("data"), 3, 4, nonce, bound)
    except BaseException as exc:
        try:
            os.write(2, ("checker: %s: %s\n" % (type(exc).__name__, exc)).encode()[:1000])
        except Exception:
            pass
    finally:
        os._exit(code)


def run_checked(req, uid, root, counter, wipe_shared, pidns):
    """One checked run: the candidate process (the program, then serving calls to
    ``req["entry"]``) and the checker process (the request's checker, which follows the
    request on the caller's stream and is passed to the checker process only, after the
    candidate process exists). ``checked`` is true only when the checker wrote the per-run
    nonce and ``done`` on its report channel, which no other process holds."""
    import socket

    lim = req["limits"]
    workdir = os.path.join(root, "run%d" % counter)
    os.mkdir(workdir, 0o700)
    if os.getuid() == 0 and uid != 0:
        os.chown(workdir, uid, uid)
    compiled = _compile(req)
    chan_c, chan_u = socket.socketpair()
    uerr_r, uerr_w = os.pipe()
    t0 = time.monotonic()
    deadline = t0 + float(lim["wall_s"])
    upid = os.fork()
    if upid == 0:
        try:
            _candidate_child(req, compiled, uid, workdir, chan_u.fileno(), uerr_w)
        finally:
            os._exit(120)
    chan_u.close()
    os.close(uerr_w)
    # made only now, after the candidate process exists: none of it was ever in its memory
    nonce = os.urandom(16).hex()
    rep_r, rep_w = os.pipe()
    terr_r, terr_w = os.pipe()
    src_r, src_w = socket.socketpair()
    tpid = os.fork()
    if tpid == 0:
        try:
            _checker_child(req, uid, chan_c.fileno(), rep_w, terr_w, src_r.fileno(), nonce)
        finally:
            os._exit(120)
    chan_c.close()
    src_r.close()
    os.close(rep_w)
    os.close(terr_w)
    _forward(src_w, deadline)
    src_w.close()

    bound = int(lim["output_bytes"])
    bufs = {rep_r: bytearray(), terr_r: bytearray(), uerr_r: bytearray()}
    open_fds = [rep_r, terr_r, uerr_r]
    reason = None
    # the run is over when the checker's channels close (the checker ended); the candidate
    # and whatever it left running are killed then
    while rep_r in open_fds or terr_r in open_fds:
        left = deadline - time.monotonic()
        if left <= 0:
            reason = "timeout"
            break
        r, _, _ = select.select(open_fds, [], [], min(left, 0.5))
        for fd in r:
            chunk = os.read(fd, 65536)
            if not chunk:
                open_fds.remove(fd)
                continue
            buf = bufs[fd]
            room = bound - len(buf)
            buf += chunk[: max(0, room)]
            if len(chunk) > room:
                reason = "output_limit"
        if reason:
            break
    # did the candidate end on its own (before we kill it)?
    try:
        own = os.waitid(os.P_PID, upid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        own = False
    _kill_group(tpid)
    _kill_group(upid)
    _, tstatus, tru = os.wait4(tpid, 0)
    _, ustatus, uru = os.wait4(upid, 0)
    wall = time.monotonic() - t0
    _clean_up(uid, workdir, wipe_shared, pidns)
    # what is left in the candidate's stderr (its leftovers are dead now: no writer remains)
    for fd in list(open_fds):
        while len(bufs[fd]) <= bound:
            r, _, _ = select.select([fd], [], [], 0)
            chunk = os.read(fd, 65536) if r else b""
            if not chunk:
                break
            bufs[fd] += chunk[: max(0, bound - len(bufs[fd]))]
    for fd in (rep_r, terr_r, uerr_r):
        os.close(fd)

    uerr = bytes(bufs[uerr_r]).decode("utf-8", "replace")
    terr = bytes(bufs[terr_r]).decode("utf-8", "replace")
    reports, checked, forged = [], False, False
    prefix = nonce + " "
    for line in bytes(bufs[rep_r]).decode("utf-8", "replace").splitlines():
        if not line.startswith(prefix) or checked:
            forged = True  # cannot happen: only the checker holds this channel
            continue
        body = line[len(prefix) :]
        if body == "done":
            checked = True
        else:
            try:
                reports.append(json.loads(body))
            except ValueError:
                forged = True
    if forged:
        checked = False
        reason = reason or "sandbox_error"
    u_exit, u_sig, u_why = _ended(ustatus, uru, lim, uerr)
    if not own and u_why not in ("cpu_time", "file_size"):
        u_exit = u_sig = None  # still running at the end: we killed it
        u_why = "ok"
    _, _, t_why = _ended(tstatus, tru, lim, terr)
    if reason is None:
        if u_why in ("cpu_time", "file_size", "memory", "killed"):
            reason = u_why  # the program died of its limits or a signal
        elif checked:
            reason = "ok"
        elif t_why in ("cpu_time", "file_size", "memory", "killed"):
            reason = t_why
        else:
            reason = "error"
    return {
        "status": reason,
        "exit_code": u_exit,
        "signal": u_sig,
        "stdout": "",
        "stderr": uerr + terr,
        "wall_s": wall,
        "checked": checked,
        "reports": reports,
    }


def main():
    import gc

    if _LIBC is not None:
        # orphans of an execution (a fork bomb's, a detached grandchild's) are re-parented to
        # the runner, which reaps them; otherwise they could linger as zombies
        try:
            _LIBC.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
        except Exception:
            pass
    uid = int(sys.argv[1])
    root = sys.argv[2]
    wipe_shared = sys.argv[3] == "1"
    pidns = sys.argv[4] == "1"
    if len(sys.argv) > 5 and sys.argv[5] == "1":
        _preload_more()
    os.makedirs(root, exist_ok=True)
    # Once here rather than in every child, where each cost ~80-100 copy-on-write page
    # faults (~0.5 ms apiece on a Firecracker VM): no_new_privs is inherited by every fork
    # and cannot be undone; every execution starts from this minimal environment.
    _no_new_privs()
    os.environ.clear()
    os.environ.update({"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    _streams()
    gc.collect()
    gc.freeze()  # forked children never traverse (and so never copy) the runner's objects
    if wipe_shared:
        for shared in ("/tmp", "/dev/shm"):
            try:
                os.chmod(shared, 0o1777)
            except OSError:
                pass
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    global _CHECKED
    _CHECKED = _load_checked()
    # Not dumpable: a program running as the runner's own user (a caller that is not root)
    # can neither attach to the runner nor open or take its descriptors (/proc/PID/fd,
    # pidfd_getfd) - the caller's stream, a checker's report channel. Forks inherit it.
    _set_dumpable(0)
    _write_all(1, (json.dumps({"ready": True, "pid": os.getpid()}) + "\n").encode())
    counter = 0
    while True:
        # a request: a 32-byte header "<len(json)> <len(checker)>\n", the JSON, the checker
        head = _read_exact(0, 32)
        body = _read_exact(0, int(head[:15])) if head else None
        if body is None:
            return
        _UNREAD[0] = int(head[16:31])
        counter += 1
        try:
            req = json.loads(body)
            del body
            if "entry" in req:
                reply = run_checked(req, uid, root, counter, wipe_shared, pidns)
            else:
                reply = run_one(req, uid, root, counter, wipe_shared, pidns)
        except Exception as exc:
            reply = {"status": "sandbox_error", "stderr": "%s: %s" % (type(exc).__name__, exc)}
        if _UNREAD[0]:
            _forward(None, 0.0)
        _write_all(1, (json.dumps(reply) + "\n").encode())


if __name__ == "__main__":
    main()
