"""Where a run's problems and verdicts come from, chosen once when the run is built.

A problem source gives the rollout producer two things: a *task stream* (the curriculum's
side: hand out problems, take the step's verified rollouts, report metrics, checkpoint
state) and a *verifier* (the batched verification stage the reward sources call). The
producer uses them the same way whichever source built them, so the loop holds no branch
on where its problems live.

- ``local`` (default): the run's own :class:`~verirl.curriculum.Curriculum` (``curriculum:``)
  and :class:`~verirl.verification.batch.BatchVerifier` on the run's executor and provers
  (:mod:`verirl.sources.local`).
- ``server`` (``envs.server: URL``): a ``verirl serve`` gym. The server's named curriculum
  (``envs.curriculum``, default ``run.name``) hands out the problems; its batched
  ``POST /verify`` gives the verdicts, and each verdict on a problem that curriculum handed
  to this run moves it server-side (:mod:`verirl.sources.server`).

``envs.source`` names the registered source (:data:`PROBLEM_SOURCES`, in
:mod:`verirl.sources.base`); a new source is one more ``@PROBLEM_SOURCES.register``. A source
reads the gym's settings (:class:`~verirl.serve.settings.GymConfig`), not the whole training
config.
"""

from __future__ import annotations

from verirl.sources.base import PROBLEM_SOURCES, ProblemSource, TaskStream, build_source


@PROBLEM_SOURCES.builtins
def _builtins() -> None:
    from verirl.sources import local, server  # noqa: F401


__all__ = ["PROBLEM_SOURCES", "ProblemSource", "TaskStream", "build_source"]
