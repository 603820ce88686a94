"""The dev Slurm of ``scripts/slurm-dev`` for tests marked ``slurm``.

They skip, saying why, when no Slurm answers; with ``QUEUECAST_REQUIRE_SLURM=1`` (CI) they
fail instead. The client tools find the cluster through ``SLURM_CONF`` or, failing that, the
state folder ``scripts/slurm-dev`` uses (``QUEUECAST_SLURM_DIR``, default /tmp/queuecast-slurm).
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest

from holdqueue.models import Site
from holdqueue.services.sites import create_site

PARTITION = "batch"


def slurm_conf_path() -> str:
    if os.environ.get("SLURM_CONF"):
        return os.environ["SLURM_CONF"]
    folder = os.environ.get("QUEUECAST_SLURM_DIR", "/tmp/queuecast-slurm")
    return str(Path(folder) / "etc" / "slurm.conf")


def slurm_problem(conf: str) -> str | None:
    """Why the dev Slurm cannot be used, or None when ``sinfo`` shows the partition up."""
    if not Path(conf).is_file():
        return f"no Slurm configuration at {conf} (run scripts/slurm-dev start)"
    try:
        out = subprocess.run(
            ["sinfo", "-h", "-p", PARTITION, "-o", "%a"],
            capture_output=True,
            text=True,
            timeout=20,
            env={**os.environ, "SLURM_CONF": conf},
        )
    except (FileNotFoundError, subprocess.TimeoutExpired) as exc:
        return f"sinfo failed: {exc}"
    if out.returncode != 0 or "up" not in out.stdout:
        return f"partition {PARTITION} is not up: {(out.stderr or out.stdout).strip()[:200]}"
    return None


@pytest.fixture(scope="session")
def slurm_conf() -> str:
    conf = slurm_conf_path()
    problem = slurm_problem(conf)
    if problem and os.environ.get("QUEUECAST_REQUIRE_SLURM") == "1":
        pytest.fail(f"QUEUECAST_REQUIRE_SLURM=1 but {problem}")
    if problem:
        pytest.skip(f"dev Slurm not available: {problem}")
    return conf


@pytest.fixture
def job_name() -> str:
    """A name unique to the test: every Slurm job it makes is cancelled afterwards."""
    return f"qctest-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def slurm_site(slurm_conf, tmp_path, job_name) -> Site:
    site = create_site(
        {
            "name": f"dev-{job_name}",
            "backend": "slurm",
            "machine_procs": 128,
            "partition": PARTITION,
            "config": {"slurm_conf": slurm_conf, "workdir": str(tmp_path)},
            "trace": None,
            "warm_up": False,
        },
        None,
    )
    yield site
    squeue(slurm_conf)  # the controller still answers
    subprocess.run(
        ["scancel", f"--name={job_name}"],
        env={**os.environ, "SLURM_CONF": slurm_conf},
        capture_output=True,
        timeout=20,
        check=False,
    )


def squeue(conf: str, *extra: str) -> list[dict]:
    out = subprocess.run(
        ["squeue", "--json", *extra],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "SLURM_CONF": conf},
        check=True,
    )
    return json.loads(out.stdout)["jobs"]


def slurm_jobs_tagged(conf: str, tag: str) -> list[dict]:
    """Every job the controller knows (live or recently finished) carrying ``tag``."""
    return [j for j in squeue(conf, "--states=all") if j.get("comment") == tag]
