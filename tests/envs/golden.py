"""The golden digest of every environment's problems, and of the config defaults and examples.

Every registered environment generates its problems at difficulties 0–5 (those it allows) and
seeds 0–4; the prompt, answer and data of each are written as canonical JSON (types kept:
a tuple is not a list, a ``Fraction`` is not a float) and hashed with SHA-256, one digest per
environment. The environment's class attributes a user sees (family, tags, answer format) are
hashed too (the family under its old name, :data:`verirl.envs.families.FAMILY_ALIASES`: the
digest pins what each old name selects, while ``tests/envs/test_layout.py`` pins the family to
the module path), and so are the default config and every ``examples/*.yaml`` as loaded. The
digests live in ``golden_problems.json`` beside this file; ``tests/envs/test_golden.py``
compares them, naming the first environment that differs.

Regenerate (only when a change of problems is intended, and say so in the commit)::

    PYTHONPATH=src python -m tests.envs.golden --write
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).with_name("golden_problems.json")
ROOT = Path(__file__).resolve().parents[2]
DIFFICULTIES = range(6)
SEEDS = range(5)


def canonical(value: Any) -> Any:
    """``value`` as JSON-ready data that keeps its Python type (tuples, sets, fractions, ...)."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return {"int": str(value)} if abs(value) > 2**53 else value
    if isinstance(value, float):
        return {"float": repr(value)}
    if isinstance(value, Fraction):
        return {"Fraction": f"{value.numerator}/{value.denominator}"}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    if isinstance(value, tuple):
        return {"tuple": [canonical(v) for v in value]}
    if isinstance(value, set | frozenset):
        items = sorted((canonical(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
        return {type(value).__name__: items}
    if isinstance(value, dict):
        pairs = [[canonical(k), canonical(v)] for k, v in value.items()]
        if all(isinstance(k, str) for k in value):
            return {"dict": {k: v for k, v in pairs}}
        return {"dict_items": pairs}
    return {type(value).__name__: repr(value)}


def _sha(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def env_digest(name: str) -> str:
    """SHA-256 over the canonical JSON of ``name``'s problems (difficulties 0–5 × seeds 0–4)."""
    from verirl.envs import get_env

    env = get_env(name)
    rows = []
    for difficulty in DIFFICULTIES:
        if difficulty > env.max_difficulty:
            continue
        for seed in SEEDS:
            p = env.generate(difficulty, seed)
            rows.append([difficulty, seed, p.prompt, p.answer, canonical(p.data)])
    return _sha(rows)


def env_meta(name: str) -> str:
    """SHA-256 over what a user sees of ``name`` besides its problems."""
    from verirl.envs import get_env
    from verirl.envs.families import old_family_name

    env = get_env(name)
    meta = {
        "family": old_family_name(env.family) or env.family,
        "tags": list(env.tags),
        "difficulty_scales": env.difficulty_scales,
        "max_difficulty": env.max_difficulty,
        "answer_instruction": env.answer_instruction,
        "answer_kind": env.answer_kind,
        "answer_format": repr(env.answer_format),
        "prover": env.prover,
        "stateful": env.stateful,
    }
    return _sha(meta)


def config_digests() -> dict[str, str]:
    """SHA-256 of the default config and of each ``examples/*.yaml`` as loaded."""
    from verirl.config import TrainConfig, load_config

    out = {"<default>": _sha(TrainConfig().model_dump(mode="json"))}
    for path in sorted((ROOT / "examples").glob("*.yaml")):
        out[f"examples/{path.name}"] = _sha(load_config(path).model_dump(mode="json"))
    return out


def compute() -> dict[str, Any]:
    """All digests, as written to ``golden_problems.json``."""
    from verirl.envs import env_names

    names = sorted(env_names())
    return {
        "problems": {n: env_digest(n) for n in names},
        "meta": {n: env_meta(n) for n in names},
        "configs": config_digests(),
    }


def differences(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """What differs between two digests, one line each, environments in name order."""
    out = []
    for section in ("problems", "meta", "configs"):
        want, got = expected.get(section, {}), actual.get(section, {})
        for key in sorted(set(want) | set(got)):
            if key not in got:
                out.append(f"{section}: {key} is gone")
            elif key not in want:
                out.append(f"{section}: {key} is new (not in the golden file)")
            elif want[key] != got[key]:
                out.append(f"{section}: {key} differs")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the golden file")
    args = parser.parse_args(argv)
    actual = compute()
    if args.write:
        GOLDEN.write_text(json.dumps(actual, indent=1, sort_keys=True) + "\n")
        print(f"wrote {GOLDEN} ({len(actual['problems'])} environments)")
        return 0
    diff = differences(json.loads(GOLDEN.read_text()), actual)
    print("\n".join(diff) or "golden digest matches")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
