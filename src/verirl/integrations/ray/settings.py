"""The parameter models of verirl's Ray plug-in: the ``ray`` executor's
(:class:`RayPoolParams`) and the ``ray`` placement's (:class:`RayParams`, ``run.placement:
{name: ray, params: {...}}``). They live here, with the plug-in, not in the core config."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from verirl.backends.placement import BackendSettings


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class RayPoolParams(_Params):
    """The ``ray`` executor's parameters (``verification.executor.params``; with the ``ray``
    placement, its ``verifiers``)."""

    actors: int = Field(2, ge=1, description="Verifier actors (each owns its own checkers).")
    num_cpus: float = Field(1.0, gt=0, description="CPUs Ray reserves for each verifier actor.")
    concurrency: int = Field(
        1,
        ge=1,
        description="Calls one actor serves at once (threads: useful when its Coq pool has "
        "several workers or its verifier waits on a subprocess). Calls beyond "
        "actors × concurrency wait in the driver (back-pressure).",
    )
    grace_s: float = Field(
        10.0,
        gt=0,
        description="Time past a call's deadline after which its actor counts as hung: it is "
        "killed and replaced, and its calls score as timeouts.",
    )
    prefetch: int = Field(
        1,
        ge=0,
        description="Calls queued at each actor place behind the one it runs, so an actor "
        "never waits for the driver between calls. In flight at most: actors × concurrency "
        "× (1 + prefetch) calls.",
    )
    max_batch: int = Field(
        8,
        ge=1,
        description="Items per actor call at most. Each call takes ⌈r / (2 · actors · "
        "concurrency)⌉ of the r items still waiting (capped here), so Ray's cost per call is "
        "shared by several items while calls shrink towards the end of a batch and every "
        "actor stays busy; a call lost with its actor costs all of its items a timeout.",
    )
    address: str | None = Field(
        None,
        description="Ray cluster to join when Ray is not started yet (None: a private local "
        "Ray; 'auto': the running cluster).",
    )


class RayRollout(_Params):
    workers: int = Field(
        1,
        ge=1,
        description="Engine replicas (rollout.engine built in each actor); a step's prompts "
        "are sharded across them and the learner's weights are sent after every update.",
    )
    num_cpus: float = Field(1.0, gt=0, description="CPUs Ray reserves for each replica.")
    num_gpus: float = Field(0.0, ge=0, description="GPUs Ray reserves for each replica.")


class RayLearner(_Params):
    workers: int = Field(
        1,
        ge=1,
        description="Data-parallel learner processes in one torch.distributed group; each "
        "computes a share of every minibatch, gradients are summed (the update is the one "
        "process's update on the same batch).",
    )
    num_cpus: float = Field(1.0, gt=0, description="CPUs Ray reserves for each learner.")
    num_gpus: float = Field(0.0, ge=0, description="GPUs Ray reserves for each learner.")
    fsdp: bool = Field(
        False,
        description="Shard parameters, gradients and optimizer state with FSDP2 "
        "(torch.distributed.fsdp.fully_shard; CUDA only, NOT TESTED in this repository).",
    )


class RayParams(_Params):
    """The ``ray`` placement's parameters (``run.placement.params``): the cluster and the
    resources of each role."""

    address: str | None = Field(
        None,
        description="Cluster to join: None starts a private Ray on this machine (with "
        "num_cpus), 'auto' joins the cluster started by `ray start --head` on this machine, "
        "'ray://host:10001' a remote one.",
    )
    num_cpus: int | None = Field(
        None, ge=1, description="CPUs of a private local Ray (None: Ray counts the cores)."
    )
    verifiers: RayPoolParams = Field(
        default_factory=RayPoolParams,
        description="The verifier pool (the 'ray' executor's params): actors, num_cpus, "
        "concurrency, grace_s.",
    )
    rollout: RayRollout = Field(default_factory=RayRollout)
    learner: RayLearner = Field(default_factory=RayLearner)

    @classmethod
    def of(cls, settings: BackendSettings) -> RayParams:
        """The ray placement's params among a placement's ``settings``."""
        return cls.model_validate(settings.params)
