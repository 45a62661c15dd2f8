"""The ``local`` placement: every part in this process, and a producer process of its own on
this machine for the bounded-staleness schedule."""

from __future__ import annotations

from typing import TYPE_CHECKING

from verirl.backends.local_stream import LocalStream
from verirl.backends.placement import Backend, RolloutStream, register_placement
from verirl.config import AsyncConfig

if TYPE_CHECKING:
    from verirl.train.producer import ProducerSettings


@register_placement("local", "one process")
class LocalBackend(Backend):
    name = "local"

    def rollout_stream(self, staleness: AsyncConfig, producer: ProducerSettings) -> RolloutStream:
        """A producer process (or thread: ``run.async.producer``) on this machine with its
        own engine copy and verifiers (:mod:`verirl.backends.local_stream`)."""
        return LocalStream(self, staleness, producer)
