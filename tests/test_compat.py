"""The old import paths of moved modules still work, warn that they moved, and give the very
objects of the new homes (the up-a-floor ones are also checked by ``tests/test_layering.py``)."""

from __future__ import annotations

import sys
import warnings
from importlib import import_module
from typing import Any

import pytest


def _import_fresh(name: str) -> tuple[Any, list[warnings.WarningMessage]]:
    sys.modules.pop(name, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = import_module(name)
    return module, caught


@pytest.mark.parametrize(
    ("old", "new", "names"),
    [
        ("verirl.train.loop", "verirl.trainer", {"Trainer": "Trainer"}),
        ("verirl.serve.client", "verirl.sources.server", {"GymClient": "GymClient"}),
        ("verirl.serve.local", "verirl.episodes.local", {"LocalGym": "LocalGym"}),
        (
            "verirl.backends.base",
            "verirl.backends.placement",
            {
                "Backend": "Backend",
                "BACKENDS": "PLACEMENTS",
                "register_backend": "register_placement",
            },
        ),
        (
            "verirl.integrations.episodes",
            "verirl.episodes.local",
            {"LocalSource": "LocalEpisodes", "LocalSession": "LocalSession"},
        ),
        ("verirl.integrations.episodes", "verirl.episodes", {"CurriculumSource": "Episodes"}),
    ],
)
def test_an_old_path_warns_and_gives_the_new_object(
    old: str, new: str, names: dict[str, str]
) -> None:
    module, caught = _import_fresh(old)
    moved = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert moved, [str(w.message) for w in caught]
    said = str(moved[0].message)
    assert said.startswith(f"{old} moved to "), said
    assert new.startswith(said.removeprefix(f"{old} moved to ")), said  # the new home
    target = import_module(new)
    for old_name, new_name in names.items():
        assert getattr(module, old_name) is getattr(target, new_name), f"{old}.{old_name}"


def test_the_old_openenv_episodes_name_is_the_new_class() -> None:
    openenv = import_module("verirl.integrations.openenv")
    assert openenv.OpenEnvSource is openenv.OpenEnvEpisodes
