"""verirl inside other trainers: environments, curriculum, rewards and credit as plug-ins.

- :mod:`verirl.integrations.trl` — TRL 1.16 (``GRPOTrainer``): a curriculum dataset, reward
  functions (environment verifier, CER, Rule+CER), a callback and a multi-turn
  ``rollout_func``. Extra: ``verirl[trl]``.
- :mod:`verirl.integrations.verl` — verl 0.9.1: ``compute_score``, a batched reward manager, a
  curriculum dataset for ``data.custom_cls`` and the process / TCPO advantage estimators.
  Extra: ``verirl[verl]`` (its own environment: verl pins ``transformers<5.11``).

Nothing here is imported by ``import verirl``; each submodule imports its trainer lazily, and
:mod:`verirl.integrations.problems` (shared by both) imports neither.
"""
