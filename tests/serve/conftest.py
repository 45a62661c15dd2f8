from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.serve.helpers import ServerProcess


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One real server for the session's process tests (startup costs seconds)."""
    state = tmp_path_factory.mktemp("serve") / "state.sqlite"
    proc = ServerProcess(state, "verification.executor.name=threads").start()
    yield proc
    proc.kill()
