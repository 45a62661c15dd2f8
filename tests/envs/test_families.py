"""Families named by their path (``verirl.envs.families``): every environment's family is the
module that defines it, the old family names stay accepted and select what they always did,
and an environment in a category package cannot name its family by hand."""

from __future__ import annotations

import random
from typing import Any

import pytest

from verirl.cli import main
from verirl.envs import ENVIRONMENTS, FAMILY_ALIASES, Environment, env_names, families
from verirl.envs.families import family_members, module_family, old_family_name, path_family
from verirl.errors import UserInputError

CODE_LISTS = [
    "code_inversions",
    "code_list_pipeline",
    "code_longest_increasing",
    "code_max_subarray",
    "code_merge_intervals",
    "code_pair_sums",
    "code_window_extremes",
]


def test_module_family_is_category_slash_module() -> None:
    assert module_family("verirl.envs.graphs.walks") == "graphs/walks"
    assert module_family("verirl.envs.base") is None
    assert module_family("verirl.envs.kit.graphs.extra") is None
    assert module_family("my_plugin.envs.graphs.walks") is None
    assert path_family("my_plugin.digits") == "my_plugin/digits"
    assert path_family("verirl.envs.code.lists") == "code/lists"


def test_a_family_selects_its_module() -> None:
    assert env_names(family="code/lists") == CODE_LISTS
    for family in families():
        names = env_names(family=family)
        assert names and all(
            ENVIRONMENTS.get(n).part.__module__ == "verirl.envs." + family.replace("/", ".")
            for n in names
        )


def test_old_names_select_what_they_always_did() -> None:
    # code_strings and code_lists shared one module before it was split in two
    assert env_names(family="code_lists") == CODE_LISTS
    assert "code_run_length" in env_names(family="code_strings")
    assert not set(env_names(family="code_strings")) & set(CODE_LISTS)
    assert set(env_names(family="graph_optimization")) == {
        n
        for m in ("colourings", "covers_flows", "steiner_flow", "trees_paths")
        for n in env_names(family=f"graphs/{m}")
    }
    # the old name of every environment is pinned by the golden meta digest; here: the modules
    # of the old names exist and no module answers to two old names
    known = set(families())
    seen: dict[str, str] = {}
    for old, modules in FAMILY_ALIASES.items():
        assert "/" not in old and set(modules) <= known, old
        for module in modules:
            assert module not in seen, f"{module} is in {seen.get(module)} and {old}"
            seen[module] = old
            assert old_family_name(module) == old
    assert len(FAMILY_ALIASES) == 70
    assert old_family_name("graphs/walks") == "graphs_walks"
    assert old_family_name("no/such") is None


def test_an_old_name_and_its_module_agree() -> None:
    assert env_names(family="graphs_walks") == env_names(family="graphs/walks")
    assert family_members("graphs_walks") == {"graphs_walks", "graphs/walks"}


def test_an_unknown_family_is_refused_naming_both_kinds() -> None:
    with pytest.raises(UserInputError, match="unknown environment family 'graph_walks'") as info:
        env_names(family="graph_walks")
    assert "graphs/walks" in str(info.value) and "graphs_walks" in str(info.value)


def _env_class(module: str, **attrs: Any) -> type[Environment]:
    """A minimal environment class defined as if in ``module``."""

    def _generate(self: Environment, difficulty: int, rng: random.Random) -> Any:
        raise NotImplementedError

    namespace: dict[str, Any] = {
        "__module__": module,
        "difficulty_scales": "nothing",
        "_generate": _generate,
        "check": lambda self, problem, answer: None,
        "solve": lambda self, problem: "",
        **attrs,
    }
    return type("FamilyProbe", (Environment,), namespace)


def test_a_category_environment_cannot_name_its_family() -> None:
    assert _env_class("verirl.envs.graphs.probe").family == "graphs/probe"
    with pytest.raises(TypeError, match="belongs to the family 'graphs/probe'"):
        _env_class("verirl.envs.graphs.probe", family="graphs")
    with pytest.raises(TypeError, match="remove the attribute"):  # even the right one
        _env_class("verirl.envs.graphs.probe", family="graphs/probe")


def test_a_plugin_environment_gets_its_module_path_or_its_own_family(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ENVIRONMENTS, "_items", dict(ENVIRONMENTS._items))
    plain = ENVIRONMENTS.register("probe_plain")(_env_class("my_plugin.digits"))
    named = ENVIRONMENTS.register("probe_named")(
        _env_class("my_plugin.digits", family="number_theory")
    )
    assert plain.family == "my_plugin/digits"
    assert env_names(family="my_plugin/digits") == ["probe_plain"]
    # a plugin family that is also an old name: both the plugin's and the old modules
    chosen = env_names(family="number_theory")
    assert named.name in chosen
    assert set(chosen) - {named.name} == set(env_names(family="number_theory/elementary"))


def test_envs_list_shows_the_module_and_takes_an_old_name(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["envs", "list", "--family", "code_lists"]) == 0
    out = capsys.readouterr().out
    assert f"{len(CODE_LISTS)} environments" in out and "module" in out
    rows = [line for line in out.splitlines() if "code/lists" in line]
    assert len(rows) == len(CODE_LISTS)
