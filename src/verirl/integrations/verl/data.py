"""verirl's adaptive curriculum inside verl, through ``data.custom_cls``.

verl 0.9.1 has no curriculum-sampler hook (``data.sampler.class_path`` existed through 0.7.1
and was removed in 0.8.0); what it offers is a custom dataset class and, in the legacy
``RayPPOTrainer`` loop, a call ``train_dataset.on_batch_end(batch=batch)`` after every step.
:class:`CurriculumDataset` uses both: each ``__getitem__`` draws the next task from verirl's
curriculum (RLVE, Zeng et al. 2025, arXiv:2511.07317: env uniform, difficulty uniform in the
env's window, ``seed += 1``), and ``on_batch_end`` feeds the step's verified outcomes — the
``verirl_correct`` flags the verirl reward managers and ``compute_score`` return, never the
graded reward — back to it, so the windows move during training.

Config (``data_files`` picks the mode)::

    data.train_files=verirl:train  data.val_files=verirl:eval
    data.custom_cls.path=pkg://verirl.integrations.verl.data  data.custom_cls.name=CurriculumDataset
    data.dataloader_num_workers=0  trainer.use_v1=false
    +data.verirl.environments=[addition,sort_list]  +data.verirl.tau_num=128 ...

``data.verirl`` takes the fields of :class:`~verirl.curriculum.CurriculumConfig` plus
``seed``, ``size`` (rows per epoch, default 10240), ``eval_size`` (held-out rows, default 64,
seeds from :func:`~verirl.curriculum.eval_seed`, difficulties cycling over
``eval_difficulties``, default ``[0]``) and ``system_prompt``. Any other ``data_files`` value
is read as a normal parquet dataset (verl's ``RLHFDataset``), so the validation set can be a
file.

Versions: works with verl 0.9.1's legacy trainer (``trainer.use_v1=false``) and its
``experimental.separation`` trainer, which call ``on_batch_end``. verl 0.9.1's default v1
trainer never calls it, so the windows would not move: the dataset then raises after drawing
three batches without feedback rather than silently training on a frozen curriculum. Through
0.7.1 use this dataset the same way (``data.custom_cls`` exists there too) on any trainer that
calls ``on_batch_end``. ``data.dataloader_num_workers`` must be 0: a worker process would draw
from its own copy of the curriculum, which never sees the outcomes.

Checkpoints: verl's ``StatefulDataLoader`` stores the dataset's :meth:`state_dict` with its own
state, so a resumed run restores the windows, counters and seed counter.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import torch
from verl.utils.dataset.rl_dataset import RLHFDataset

from verirl.curriculum import CurriculumConfig, Outcome, build_curriculum, eval_seed
from verirl.errors import UserInputError
from verirl.integrations.problems import CurriculumFeedback, ProblemStore, identity_columns
from verirl.types import Problem

log = logging.getLogger("verirl.integrations.verl")
TRAIN, EVAL = "verirl:train", "verirl:eval"
_OWN_KEYS = {"seed", "size", "eval_size", "eval_difficulties", "system_prompt"}


def _plain(section: Any) -> dict[str, Any]:
    if section is None:
        return {}
    try:
        from omegaconf import OmegaConf

        if OmegaConf.is_config(section):
            return dict(OmegaConf.to_container(section, resolve=True))
    except ImportError:
        pass
    return dict(section)


def _mode(data_files: Any) -> str | None:
    files = [data_files] if isinstance(data_files, str) else list(data_files or [])
    marked = [f for f in files if str(f).startswith("verirl:")]
    if not marked:
        return None
    if len(files) != 1 or marked[0] not in (TRAIN, EVAL):
        raise UserInputError(
            f"data files {files!r}: use exactly one of {TRAIN!r} or {EVAL!r} for verirl rows"
        )
    return str(marked[0])


class CurriculumDataset(RLHFDataset):
    """A verl dataset drawing problems from verirl's curriculum; see the module docstring."""

    def __init__(
        self,
        data_files: Any,
        tokenizer: Any,
        processor: Any = None,
        config: Any = None,
        max_samples: int = -1,
        **kwargs: Any,
    ) -> None:
        self.mode = _mode(data_files)
        if self.mode is None:  # an ordinary parquet dataset (e.g. the validation set)
            super().__init__(data_files, tokenizer, processor, config, max_samples, **kwargs)
            return
        self.tokenizer, self.processor, self.config = tokenizer, processor, config
        self.data_files = self.original_data_files = [self.mode]
        settings = _plain(config.get("verirl") if config is not None else None)
        own = {k: settings.pop(k) for k in list(settings) if k in _OWN_KEYS}
        try:
            curriculum_cfg = CurriculumConfig.model_validate(settings)
        except Exception as exc:
            raise UserInputError(f"data.verirl: {exc}") from exc
        self.curriculum = build_curriculum(curriculum_cfg, seed=int(own.get("seed", 0)))
        self.feedback = CurriculumFeedback(self.curriculum, distributed=False)
        self.store = ProblemStore()
        self.system_prompt: str | None = own.get("system_prompt")
        self.size = int(own.get("size", 10240))
        self.batch_size = int(config.get("train_batch_size", 0) or 0) if config else 0
        if self.mode == EVAL:
            self.size = int(own.get("eval_size", 64))
            self.eval_problems = self._eval_problems(list(own.get("eval_difficulties", [0])))
        if max_samples and max_samples > 0:
            self.size = min(self.size, max_samples)
        workers = config.get("dataloader_num_workers", 0) if config is not None else 0
        if self.mode == TRAIN and workers:
            raise UserInputError(
                f"data.dataloader_num_workers={workers}: the verirl curriculum dataset needs 0 "
                "(a worker process draws from its own copy of the curriculum, which never sees "
                "the verified outcomes)"
            )
        self.drawn_since_feedback = 0

    def _eval_problems(self, difficulties: list[int]) -> list[Problem]:
        from verirl.envs import get_env

        envs = self.curriculum.environments
        return [
            get_env(envs[k % len(envs)]).generate(
                int(difficulties[(k // len(envs)) % len(difficulties)]), eval_seed(k)
            )
            for k in range(self.size)
        ]

    def __len__(self) -> int:
        if self.mode is None:
            return int(super().__len__())
        return self.size

    def row(self, problem: Problem, index: int) -> dict[str, Any]:
        """A row as verl's ``RLHFDataset`` returns it (chat messages in ``raw_prompt``)."""
        messages = []
        if self.system_prompt:
            messages.append({"role": "system", "content": self.system_prompt})
        messages.append({"role": "user", "content": problem.prompt})
        extra = {"index": index, **identity_columns(problem)}
        return {
            "raw_prompt": messages,
            "data_source": f"verirl/{problem.env}",
            "reward_model": {"style": "rule", "ground_truth": problem.answer},
            "extra_info": extra,
            "dummy_tensor": torch.tensor([0], dtype=torch.uint8),
            "index": index,
            "tools_kwargs": {},
            "interaction_kwargs": {},
        }

    def __getitem__(self, item: int) -> dict[str, Any]:
        if self.mode is None:
            return dict(super().__getitem__(item))
        if self.mode == EVAL:
            return self.row(self.eval_problems[item], int(item))
        if torch.utils.data.get_worker_info() is not None:
            raise UserInputError("verirl's curriculum dataset cannot run in a DataLoader worker")
        limit = 3 * self.batch_size
        if limit and self.drawn_since_feedback >= limit:
            raise RuntimeError(
                f"verirl curriculum: {self.drawn_since_feedback} rows drawn without any "
                "outcome fed back (on_batch_end was never called); run verl's legacy trainer "
                "(trainer.use_v1=false), whose loop calls train_dataset.on_batch_end"
            )
        self.drawn_since_feedback += 1
        problem = self.curriculum.next_tasks(1)[0].generate()
        self.store.put(problem)
        return self.row(problem, int(item))

    def outcomes(self, batch: Any) -> list[Outcome]:
        """The verified outcomes of a verl batch: every sample with verirl identity columns
        in ``extra_info`` and a ``verirl_correct`` (or ``acc``) value from the reward."""
        nt = batch.non_tensor_batch
        infos = nt.get("extra_info")
        flags = nt.get("verirl_correct", nt.get("acc"))
        if infos is None or flags is None:
            return []
        out = []
        for info, flag in zip(list(infos), np.asarray(flags).tolist(), strict=True):
            info = info or {}
            if info.get("verirl_env") is None:
                continue
            out.append(
                Outcome(
                    str(info["verirl_env"]),
                    int(info["verirl_difficulty"]),
                    bool(float(flag) >= 1.0),
                )
            )
        return out

    def on_batch_end(self, batch: Any) -> None:
        """verl's per-step hook: update the curriculum with the step's outcomes."""
        if self.mode != TRAIN:
            return
        outcomes = self.outcomes(batch)
        raised = self.feedback.apply(outcomes)
        self.drawn_since_feedback = 0
        if raised:
            log.info("verirl curriculum: raised %s", ", ".join(raised))

    def metrics(self) -> dict[str, float]:
        return self.curriculum.metrics()

    # torchdata's StatefulDataLoader (verl's data loader) saves a dataset that has these two
    # methods in its state, so the curriculum rides along in verl's data.pt checkpoints.
    def state_dict(self) -> dict[str, Any]:
        """The curriculum's state (windows, counters, seed counter, RNG), for checkpoints."""
        return {"curriculum": self.curriculum.state_dict()} if self.mode == TRAIN else {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if self.mode == TRAIN and state.get("curriculum"):
            self.curriculum.load_state_dict(state["curriculum"])
