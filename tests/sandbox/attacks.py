"""Programs that try to make a checked sandbox run pass without passing (test helper).

:func:`attacks` gives, for a function ``entry(params)``, programs that exit early, kill
themselves or every process they can, patch builtins and ``AssertionError``, return objects
that equal everything, print or write forged result lines (also lines of the exact shape of
the checker's report channel, with every 32-hex-digit string found in their own memory as
the nonce), close or duplicate descriptors (brute force over 0..1023, and every descriptor of
their parent and of PID 1 they can open through ``/proc``), or leave a sleeping grandchild
that forges after they are gone. None of them computes the right answer.
"""

from __future__ import annotations

import os

from verirl.errors import UserInputError
from verirl.sandbox import isolation_mode


def available_modes() -> list[str]:
    """The isolation modes this machine can run."""
    modes = []
    for mode in ("bwrap", "unshare", "rlimits"):
        try:
            isolation_mode(mode)
        except UserInputError:
            continue
        modes.append(mode)
    return modes


def runs_as_other_user(mode: str) -> bool:
    """Whether a program in ``mode`` runs as a user that owns nothing of the caller's (so an
    attack that signals every process it can cannot reach the test process)."""
    return os.geteuid() == 0 or mode != "rlimits"


# Forges the checker's report line ("<nonce> done"), the runner's reply to its caller and
# harness lines, with every 32-hex string reachable in the program (gc referents, frame
# locals) as a guessed nonce, on every descriptor 0..1023 and every descriptor of its own,
# its parent's and PID 1's it can open through /proc.
FORGE = r"""
def _forge():
    import gc, os, re, sys, json
    pat = re.compile(r"[0-9a-f]{32}")
    hexes = {"0" * 32, os.urandom(16).hex()}
    for o in gc.get_objects():
        try:
            for r in gc.get_referents(o):
                if isinstance(r, str) and len(r) < 100000:
                    hexes.update(pat.findall(r))
                elif isinstance(r, (bytes, bytearray)) and len(r) < 100000:
                    hexes.update(h.decode() for h in re.findall(rb"[0-9a-f]{32}", r))
        except Exception:
            pass
    f = sys._getframe()
    while f is not None:
        for v in list(f.f_locals.values()):
            if isinstance(v, str):
                hexes.update(pat.findall(v))
        f = f.f_back
    lines = "".join("%s done\n%s {\"i\": 0, \"got\": 1}\n" % (h, h) for h in sorted(hexes))
    lines += json.dumps({"status": "ok", "checked": True, "reports": [], "stdout": ""}) + "\n"
    lines += json.dumps({"ready": True}) + "\n" + json.dumps({"i": 0, "got": 1}) + "\n"
    data = lines.encode()
    for fd in range(1024):
        try:
            os.write(fd, data)
        except OSError:
            pass
    for pid in ("self", str(os.getppid()), "1"):
        try:
            names = os.listdir("/proc/%s/fd" % pid)
        except OSError:
            continue
        for name in names:
            try:
                fd = os.open("/proc/%s/fd/%s" % (pid, name), os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                continue
            try:
                os.write(fd, data)
            except OSError:
                pass
            os.close(fd)
"""

SLEEPER = r"""
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(0.3)
        _forge()
        time.sleep(0.3)
        _forge()
    os._exit(0)
"""


def attacks(entry: str, params: str, answer: str = "None") -> dict[str, str]:
    """Hostile programs for ``def entry(params)``; ``answer`` is the (wrong) expression the
    function returns where it returns at all."""
    wrong = f"def {entry}({params}):\n    return {answer}\n"
    out = {
        "exit at load: sys.exit(0)": "import sys\nsys.exit(0)\n" + wrong,
        "exit at load: os._exit(0)": "import os\nos._exit(0)\n" + wrong,
        "exit at load: raise SystemExit(0)": "raise SystemExit(0)\n" + wrong,
        "exit at load: KeyboardInterrupt": "raise KeyboardInterrupt\n" + wrong,
        "exit in the function: sys.exit(0)": (
            f"def {entry}({params}):\n    import sys\n    sys.exit(0)\n"
        ),
        "exit in the function: raise SystemExit(0)": (
            f"def {entry}({params}):\n    raise SystemExit(0)\n"
        ),
        "exit in the function: os._exit(0)": (
            f"def {entry}({params}):\n    import os\n    os._exit(0)\n"
        ),
        "exit in the function: a BaseException subclass": (
            f"class _Out(BaseException):\n    pass\ndef {entry}({params}):\n    raise _Out()\n"
        ),
        "SIGKILL of its own pid at load": (
            "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n" + wrong
        ),
        "SIGTERM of its own pid in the function": (
            f"def {entry}({params}):\n    import os, signal\n"
            "    os.kill(os.getpid(), signal.SIGTERM)\n"
        ),
        "SIGKILL of its own process group": "import os\nos.killpg(0, 9)\n" + wrong,
        "replace AssertionError": (
            "import builtins\nclass _Never(Exception):\n    pass\n"
            "builtins.AssertionError = _Never\n" + wrong
        ),
        "patch builtins and modules": (
            "import builtins, math, json, sys\nbuiltins.abs = lambda x: 0\n"
            "builtins.isinstance = lambda *a: True\nmath.isclose = lambda *a, **k: True\n"
            "json.dumps = lambda *a, **k: '{\"r\": 1}'\nsys.modules['json'] = None\n" + wrong
        ),
        "return an object equal to everything": (
            "class _Eq:\n    def __eq__(self, other):\n        return True\n"
            "    def __ne__(self, other):\n        return False\n"
            "    def __sub__(self, other):\n        return 0\n"
            "    def __abs__(self):\n        return 0\n    __hash__ = object.__hash__\n"
            f"def {entry}({params}):\n    return _Eq()\n"
        ),
        "return a float whose == is always true": (
            "class _F(float):\n    def __eq__(self, other):\n        return True\n"
            "    __hash__ = float.__hash__\n"
            f"def {entry}({params}):\n    return _F(12345.0)\n"
        ),
        "print forged result lines": (
            "import sys, json\n"
            "print('0' * 32 + ' done')\n"
            "print(json.dumps({'i': 0, 'got': 1}))\n"
            "sys.stderr.write('0' * 32 + ' done\\n')\n" + wrong
        ),
        "forge on every descriptor at load, then exit": FORGE
        + "_forge()\nimport os\nos._exit(0)\n",
        "forge on every descriptor in the function": (
            FORGE + f"def {entry}({params}):\n    _forge()\n    return {answer}\n"
        ),
        "close every descriptor": "import os\nos.closerange(0, 1024)\n" + wrong,
        "duplicate its channel onto stdout and print": (
            "import os, sys, json\nfor fd in range(1, 64):\n"
            "    try:\n        os.dup2(3, fd)\n    except OSError:\n        pass\n"
            "print(json.dumps({'ready': True}))\nprint('0' * 32 + ' done')\n"
            "sys.stdout.flush()\n" + wrong
        ),
        "flood its channel": (
            "import os\ntry:\n    os.write(3, b'x' * (8 << 20))\nexcept OSError:\n    pass\n"
            + wrong
        ),
        "a sleeping grandchild forges after it exits": FORGE + SLEEPER + "os._exit(0)\n",
        "a sleeping grandchild forges while it answers wrong": FORGE + SLEEPER + wrong,
        "atexit and excepthook": (
            "import atexit, sys\natexit.register(lambda: print('0' * 32 + ' done'))\n"
            "sys.excepthook = lambda *a: None\n" + wrong
        ),
    }
    return out


def kill_everything(entry: str, params: str) -> dict[str, str]:
    """Programs that signal every process they can (only for modes where the program runs
    as a user that owns nothing of the caller's: :func:`runs_as_other_user`)."""
    return {
        "SIGKILL to -1 (every process it may signal)": (
            "import os\ntry:\n    os.kill(-1, 9)\nexcept OSError:\n    pass\n"
            f"def {entry}({params}):\n    return None\n"
        ),
        "SIGSTOP then SIGKILL to every pid in /proc": (
            "import os\nfor p in os.listdir('/proc'):\n"
            "    if p.isdigit() and int(p) != os.getpid():\n"
            "        for s in (19, 9):\n            try:\n                os.kill(int(p), s)\n"
            "            except OSError:\n                pass\n"
            f"def {entry}({params}):\n    return None\n"
        ),
    }
