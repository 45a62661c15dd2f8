"""One registry API for every pluggable part: :class:`~verirl.registry.Registry` with its
decorator (name, params model, description), :class:`~verirl.registry.Spec` and the shared
:class:`~verirl.registry.NoParams`; one discovery mechanism (built-ins loaded on first lookup,
plug-ins named in ``run.plugins`` or by a ``verirl.plugins`` entry point); the parts that used
to be chosen by an ``if`` or a ``Literal`` (curriculum kinds, checker backends, group filters,
aggregations) are chosen by name from a plug-in's registration too."""

from __future__ import annotations

import sys
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from verirl.assembly import load_config
from verirl.config import ConfigError
from verirl.curriculum import CURRICULA, build_curriculum
from verirl.envs import get_env
from verirl.errors import UnknownNameError
from verirl.provers.settings import CHECKERS, Provers
from verirl.registry import NoParams, Registry, Spec
from verirl.rewards import REWARDS
from verirl.rollout.base import ENGINES, HoldsOwnWeights, ScoresSequences, Sleeps
from verirl.rollout.collect import COLLECTORS
from verirl.train.group_filters import GROUP_FILTERS
from verirl.train.loggers import LOGGERS
from verirl.train.loss import POLICY_LOSSES
from verirl.train.lr_schedules import LR_SCHEDULES
from verirl.train.optimizers import OPTIMIZERS
from verirl.train.terms import KL_ESTIMATORS, LOSS_TERMS, TOKEN_SOURCES
from verirl.train.token_masks import TOKEN_MASKS
from verirl.types import Rollout, Verdict
from verirl.verification.executors import EXECUTORS

PLUGIN = "run.plugins=[tests.plugin_registries]"


class _Scale(BaseModel):
    factor: int = 1


def _times(params: _Scale, x: int) -> int:
    return params.factor * x


def test_a_spec_parses_params_and_builds_its_part() -> None:
    spec: Spec[int] = Spec("times", _times, _Scale, "multiplies")
    assert spec.build({"factor": 3}, 5) == 15
    assert spec.build(_Scale(factor=2), 5) == 10  # a parsed model passes through
    assert spec.build(None, 5) == 5
    with pytest.raises(ValidationError):
        spec.build({"factor": "many"}, 5)


def test_the_decorator_registers_a_spec_with_params_and_description() -> None:
    reg: Registry[Spec[Any]] = Registry("thing")

    @reg.register("scaled", _Scale, "multiplies by its factor")
    def scaled(params: _Scale, x: int) -> int:
        return params.factor * x

    @reg.register("plain")
    def plain(params: NoParams, x: int) -> int:
        """Gives x back.

        More lines that are not the description."""
        return x

    assert reg.get("scaled") == Spec("scaled", scaled, _Scale, "multiplies by its factor")
    assert reg.get("scaled").build({"factor": 4}, 2) == 8
    assert reg.get("plain").params is NoParams
    assert reg.get("plain").description == "Gives x back."  # its docstring's first line


def test_no_params_refuses_any_key_and_is_the_only_one() -> None:
    with pytest.raises(ValidationError, match="extra"):
        NoParams.model_validate({"typo": 1})
    import verirl.credit.base
    import verirl.rewards.base
    import verirl.rollout.collect
    import verirl.train.off_policy

    for module in (
        verirl.credit.base,
        verirl.rewards.base,
        verirl.rollout.collect,
        verirl.train.off_policy,
    ):
        assert getattr(module, "NoParams", NoParams) is NoParams, module.__name__


# The built-in parts of each registry (a plug-in may add more).
BUILT_IN = {
    "executor": {"inline", "processes", "threads"},
    "rollout engine": {"hf", "vllm"},
    "collector": {"multi_turn", "single_turn"},
    "reward source": {"cer", "env", "exact_match", "rule", "rule_cer", "verifree"},
    "logger": {"tensorboard", "trackio", "wandb"},
    "optimizer": {"adamw", "adamw_8bit", "paged_adamw", "paged_adamw_8bit"},
    "policy loss": {"clipped_surrogate", "cispo", "sapo"},
    "group filter": {"mixed_correctness", "reward_variance"},
    "loss term": {"distill", "entropy", "kl"},  # distill: a module of its own, loaded on lookup
    "KL estimator": {"k1", "k2", "k3"},
    "token source": {"checkpoint", "privileged_self"},
    "token mask": {"none", "top_entropy"},
    "learning-rate schedule": {"constant", "cosine", "linear"},
}


@pytest.mark.parametrize(
    "registry",
    [
        EXECUTORS,
        ENGINES,
        COLLECTORS,
        REWARDS,
        LOGGERS,
        OPTIMIZERS,
        POLICY_LOSSES,
        GROUP_FILTERS,
        LOSS_TERMS,
        KL_ESTIMATORS,
        TOKEN_SOURCES,
        TOKEN_MASKS,
        LR_SCHEDULES,
    ],
    ids=lambda r: r.kind,
)
def test_every_built_in_part_is_a_spec_with_a_description(registry: Registry[Spec]) -> None:
    assert BUILT_IN[registry.kind] <= set(registry.names()), registry.kind  # loaded on lookup
    for name, spec in registry.items():
        assert isinstance(spec, Spec) and spec.name == name
        assert issubclass(spec.params, BaseModel)
        if getattr(spec.part, "__module__", "verirl.").startswith("verirl."):  # not a test's
            assert spec.description, f"{registry.kind} {name!r} has no description"


def test_registry_add_refuses_a_second_part_under_one_name() -> None:
    reg: Registry[Spec[Any]] = Registry("thing")
    reg.add(Spec("a", _times))
    reg.add(Spec("a", _times))  # the same part again is no conflict
    with pytest.raises(ValueError, match="thing 'a' is already registered"):
        reg.add(Spec("a", lambda p, x: x))
    with pytest.raises(UnknownNameError, match="unknown thing 'b'; known: a"):
        reg.get("b")


def test_built_ins_load_once_on_the_first_lookup() -> None:
    reg: Registry[Spec[Any]] = Registry("thing")
    loads: list[int] = []

    @reg.builtins
    def _load() -> None:
        loads.append(1)
        reg.register("built_in")(_times)

    assert loads == []  # declaring the loader imports nothing
    assert reg.names() == ["built_in"] and "built_in" in reg and reg.get("built_in").part is _times
    assert loads == [1]


@pytest.fixture
def undiscovered(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process whose entry points were not looked at yet."""
    import verirl.registry

    monkeypatch.setattr(verirl.registry, "_discovered", False)
    monkeypatch.setattr(verirl.registry, "_FAILED", {})


def _entry_points(where: Path, **points: str) -> None:
    """A distribution installed in ``where`` declaring ``points`` (name = module) in the
    ``verirl.plugins`` group."""
    dist = where / "probe_plugins-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: probe-plugins\nVersion: 1.0\n")
    lines = "".join(f"{k} = {v}\n" for k, v in points.items())
    (dist / "entry_points.txt").write_text(f"[verirl.plugins]\n{lines}")


def test_an_entry_point_plug_in_is_imported_when_a_name_is_missing(
    undiscovered: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "probe_plugin.py").write_text(
        "from verirl.train.group_filters import GROUP_FILTERS\n"
        "GROUP_FILTERS.register('probe_keep_all', description='keeps every group')(\n"
        "    lambda params, group: True)\n"
    )
    _entry_points(tmp_path, probe="probe_plugin", broken="probe_missing_module")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(GROUP_FILTERS, "_items", dict(GROUP_FILTERS._items))
    assert "probe_plugin" not in sys.modules
    spec = GROUP_FILTERS.get("probe_keep_all")  # not registered: the entry points are read
    assert spec.description == "keeps every group" and "probe_plugin" in sys.modules
    # a plug-in that fails to import stops no lookup, and the next unknown name says why
    with pytest.raises(UnknownNameError, match=r"plug-in broken failed to load: ModuleNotFound"):
        GROUP_FILTERS.get("nope")


def test_the_declared_plug_ins_import_and_register_their_parts() -> None:
    """Each ``verirl.plugins`` entry point of pyproject.toml imports (without its library:
    Ray and reasoning-gym load when a part is built) and registers what it promises."""
    import tomllib

    from verirl.backends import PLACEMENTS
    from verirl.envs import ON_DEMAND
    from verirl.verification.executors import EXECUTORS

    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    points = project["project"]["entry-points"]["verirl.plugins"]
    assert points == {
        "ray": "verirl.integrations.ray.placement",
        "reasoning_gym": "verirl.integrations.reasoning_gym",
    }
    for module in points.values():
        import_module(module)
    assert PLACEMENTS.get("ray").params.__module__ == "verirl.integrations.ray.settings"
    assert EXECUTORS.get("ray").params.__module__ == "verirl.integrations.ray.settings"
    assert "rg/" in ON_DEMAND


def test_a_plugin_curriculum_kind_is_chosen_by_name() -> None:
    cfg = load_config(None, [PLUGIN, "curriculum.kind=test_top_only", "curriculum.static_high=3"])
    assert "test_top_only" in CURRICULA
    curriculum = build_curriculum(cfg.curriculum, seed=0)
    assert {p.difficulty for p in curriculum.sample(12)} == {3}
    with pytest.raises(ConfigError, match=r"curriculum\.kind: unknown curriculum kind 'nope'"):
        load_config(None, ["curriculum.kind=nope"])


def test_a_plugin_checker_backend_is_built_from_its_settings() -> None:
    cfg = load_config(None, [PLUGIN, "provers.coq.backend=test_counting", "provers.coq.workers=3"])
    assert sorted(CHECKERS["coq"]) == ["coqc", "coqide", "test_counting"]
    with Provers(cfg.provers) as provers:
        checker = provers.checker("coq")
        assert checker.name == "test-counting" and checker.workers == 3  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match=r"provers\.lean\.backend: unknown lean checker backend"):
        load_config(None, ["provers.lean.backend=coqc"])


def test_group_filters_keep_what_they_say() -> None:
    problem = get_env("addition").generate(0, 0)

    def group(rewards: list[float], correct: list[bool]) -> list[Rollout]:
        return [
            Rollout(problem, 0, (1,), (2,), (0.0,), "x", "stop", verdict=Verdict(w, c))
            for w, c in zip(rewards, correct, strict=True)
        ]

    variance = GROUP_FILTERS.get("reward_variance")
    mixed = GROUP_FILTERS.get("mixed_correctness")
    graded = group([0.5, 0.2], [False, False])  # two partial credits, nothing solved
    assert variance.build(None, graded) is True
    assert mixed.build(None, graded) is False
    solved_once = group([1.0, 0.2], [True, False])
    assert variance.build(None, solved_once) is True and mixed.build(None, solved_once) is True
    same = group([1.0, 1.0], [True, True])
    assert variance.build(None, same) is False and mixed.build(None, same) is False


def test_the_filter_and_aggregation_are_checked_against_their_registries() -> None:
    cfg = load_config(
        None,
        [PLUGIN, "dynamic_sampling.filter.name=test_first_correct", "loss.aggregation=test-sum"],
    )
    assert cfg.dynamic_sampling.filter.name == "test_first_correct"
    with pytest.raises(ConfigError, match=r"^loss.aggregation: unknown loss aggregation 'x'"):
        load_config(None, ["loss.aggregation=x"])
    with pytest.raises(ConfigError, match=r"^dynamic_sampling.filter.name: unknown group filter"):
        load_config(None, ["dynamic_sampling.filter.name=x"])


def test_optional_engine_hooks_are_declared_protocols() -> None:
    class Plain:
        def generate(self, prompts, sampling):  # type: ignore[no-untyped-def]
            return []

    class OwnCopy(Plain):
        def sleep(self) -> None: ...

        def weights_mismatch(self, model=None) -> list[str]:  # type: ignore[no-untyped-def]
            return []

        def sequence_scorer(self):  # type: ignore[no-untyped-def]
            return None

    from verirl.rollout.vllm_engine import VLLMEngine

    for proto, method in (
        (Sleeps, "sleep"),
        (HoldsOwnWeights, "weights_mismatch"),
        (ScoresSequences, "sequence_scorer"),
    ):
        assert not isinstance(Plain(), proto)
        assert isinstance(OwnCopy(), proto)
        assert callable(getattr(VLLMEngine, method))  # the engine that implements them
