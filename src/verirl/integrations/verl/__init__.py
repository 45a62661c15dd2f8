"""verirl inside verl 0.9.1 (``pip install verirl[verl]``, in its own environment: verl pins
``transformers<5.11``).

- :mod:`verirl.integrations.verl.scoring` — ``compute_score`` for
  ``reward.custom_reward_function`` and the score encodings (imports neither verl nor Ray);
- :mod:`verirl.integrations.verl.reward` — reward managers ``verirl``, ``verirl_process``,
  ``verirl_turns`` (verl's ``@register``);
- :mod:`verirl.integrations.verl.advantage` — estimators ``verirl_process`` and
  ``verirl_tcpo`` (verl's ``@register_adv_est``);
- :mod:`verirl.integrations.verl.data` — :class:`CurriculumDataset` for ``data.custom_cls``;
- :mod:`verirl.integrations.verl.plugin` — imports the two registering modules; verl loads it
  in every process through the ``verl.plugins`` entry point (or
  ``VERL_USE_EXTERNAL_MODULES=verirl.integrations.verl.plugin``).

Importing this package itself imports nothing from verl.
"""

from __future__ import annotations

TESTED_VERL_VERSION = "0.9.1"

__all__ = ["TESTED_VERL_VERSION"]
