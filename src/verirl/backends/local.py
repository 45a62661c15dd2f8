"""The ``local`` placement: every part in this process, and a producer process of its own on
this machine for the bounded-staleness schedule."""

from __future__ import annotations

from typing import TYPE_CHECKING

from verirl.backends.local_stream import LocalStream
from verirl.backends.placement import PLACEMENTS, Backend, RolloutStream

if TYPE_CHECKING:
    from verirl.backends.schedules import BoundedStalenessParams
    from verirl.train.producer import ProducerSettings


@PLACEMENTS.register("local", description="one process")
class LocalBackend(Backend):
    def rollout_stream(
        self, staleness: BoundedStalenessParams, producer: ProducerSettings
    ) -> RolloutStream:
        """A producer process (or thread: its ``producer`` parameter) on this machine with
        its own engine copy and verifiers (:mod:`verirl.backends.local_stream`)."""
        return LocalStream(self, staleness, producer)
