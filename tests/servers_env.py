"""The servers of ``scripts/servers.sh start`` as the tests find them: environment variables
from ``target/servers/servers.env`` (``scripts/test.sh`` sources it)."""

from __future__ import annotations

import os

import pytest


def server_env(*names: str) -> list[str]:
    """The values of ``names``; a test without them skips, or fails under CI (where
    ``scripts/test.sh`` always starts the servers, so a missing one is a broken set-up)."""
    values = [os.environ.get(n) for n in names]
    if not all(values):
        message = (
            f"{', '.join(names)} not set: run scripts/servers.sh start and source target/servers/servers.env"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return values  # type: ignore[return-value]
