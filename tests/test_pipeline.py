"""The README's main job (``scripts/pipeline.py``), small: it must run to the end, with
every step's own check passing (counts, pruning, time travel, Java's count and sum)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.java


def test_the_main_job_runs(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "pipeline.py"),
            "--rows",
            "60000",
            "--home",
            str(tmp_path / "home"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    out = proc.stdout
    assert proc.returncode == 0, (out[-4000:], proc.stderr[-4000:])
    for step in (
        "1. create",
        "2. write 60,000",
        "3. delete",
        "4. evolve",
        "5. append",
        "6. read back",
        "7. time travel",
        "8. Java Iceberg",
    ):
        assert step in out, step
    assert "FAILED" not in out
    assert "ok: Java sees" in out and "done:" in out
