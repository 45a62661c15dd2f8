"""The vllm engine is optional: nothing imports vLLM unless the engine is chosen, and without
vLLM choosing it is a clear input error naming the extra."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from verirl.assembly import load_config
from verirl.errors import UserInputError


def test_registering_and_validating_the_engine_does_not_import_vllm() -> None:
    code = (
        "import sys\n"
        "from verirl.assembly import load_config\n"
        "cfg = load_config(None, ['rollout.engine.name=vllm',"
        " 'rollout.engine.params={kv_cache_gib: 2}'])\n"
        "assert cfg.rollout.engine.name == 'vllm'\n"
        "assert 'vllm' not in sys.modules, 'vllm imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_bad_engine_params_name_the_field() -> None:
    with pytest.raises(ValueError, match=r"rollout\.engine"):
        load_config(None, ["rollout.engine.name=vllm", "rollout.engine.params={kv_cache: 2}"])


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed")
def test_without_vllm_the_engine_names_the_extra() -> None:
    from verirl.models import tiny_model
    from verirl.rollout.vllm_engine import VLLMEngine

    with pytest.raises(UserInputError, match=r"verirl\[vllm\]"):
        VLLMEngine(tiny_model(64), tokenizer=None)
