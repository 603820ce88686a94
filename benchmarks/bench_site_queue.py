"""Answers about "now" on a real Slurm site: what each costs when every answer asks the batch
system (``QUEUECAST_QUEUE_VIEW_S=0``) and when the answers share the queue as last read
(the default, holdqueue/services/queue_view.py).

    scripts/slurm-dev start
    python benchmarks/bench_site_queue.py [--queued 200] [--requests 100] [--view-s 0 5]

Needs the development Slurm (``scripts/slurm-dev``; ``SLURM_CONF`` from it). Builds a
throwaway SQLite database in a temporary folder, a Slurm site on the dev partition whose
history is the synthetic demo workload (so it predicts), and queues ``--queued`` held jobs
(``sbatch --hold``: they stay pending and never run; cancelled at the end) so that
``squeue`` has a queue to list. Then, per ``--view-s`` value, ``--requests`` site status
GETs (``GET /api/sites/{id}/``) and as many predictions (``POST /api/sites/{id}/predict/``)
through the Django test client. Prints, per value and answer, the wall p50 / p99 in ms,
the CPU per answer of this process and of the ``squeue`` processes it started, and how
many times the batch system was asked. The controller's own CPU (slurmctld) is not counted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from _common import table

TMP = tempfile.mkdtemp(prefix="bench_site_queue_")
os.environ["QUEUECAST_SQLITE_PATH"] = str(Path(TMP) / "bench.sqlite3")
os.environ["QUEUECAST_UPLOAD_DIR"] = str(Path(TMP) / "uploads")
os.environ["QUEUECAST_FITTED_DIR"] = str(Path(TMP) / "fitted")
os.environ["QUEUECAST_CACHE_DIR"] = str(Path(TMP) / "cache")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "queuecast.settings")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402

from holdqueue.services import backends as bk  # noqa: E402
from holdqueue.services.sites import create_site  # noqa: E402
from tests.service.test_sites_support import api_for, demo_trace, make_user  # noqa: E402

HELD_JOB = ("sbatch", "--hold", "-o", "/dev/null", "-n", "1", "-t", "10", "--wrap", "sleep 1", "-J")


def slurm(conf: str, *args: str) -> str:
    return subprocess.run(
        list(args), env={**os.environ, "SLURM_CONF": conf}, capture_output=True, text=True,
        timeout=60, check=True,
    ).stdout  # fmt: skip


def cpu() -> tuple[float, float]:
    t = os.times()
    return t.user + t.system, t.children_user + t.children_system


def measure(label: str, view_s: int, call, n: int, reads: list[int]) -> dict:
    settings.QUEUECAST_QUEUE_VIEW_S = view_s
    call()  # the first answer reads the queue (and, for a prediction, loads the model)
    asked, walls = len(reads), []
    own0, kids0 = cpu()
    for _ in range(n):
        w0 = time.perf_counter()
        res = call()
        walls.append(1000 * (time.perf_counter() - w0))
        assert res.status_code == 200, res.data
    own1, kids1 = cpu()
    return {
        "QUEUECAST_QUEUE_VIEW_S": view_s,
        "answer": label,
        "p50 ms": f"{np.percentile(walls, 50):.1f}",
        "p99 ms": f"{np.percentile(walls, 99):.1f}",
        "CPU ms (this process)": f"{1000 * (own1 - own0) / n:.2f}",
        "CPU ms (squeue)": f"{1000 * (kids1 - kids0) / n:.2f}",
        "squeue runs": len(reads) - asked,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queued", type=int, default=200)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--view-s", type=int, nargs="+", default=[0, 5])
    args = parser.parse_args()
    conf = os.environ.get("SLURM_CONF") or "/tmp/queuecast-slurm/etc/slurm.conf"
    if not Path(conf).is_file():
        sys.exit(f"no dev Slurm at {conf}: run scripts/slurm-dev start (or set SLURM_CONF)")
    call_command("migrate", verbosity=0)
    name = f"qcbench-{uuid.uuid4().hex[:8]}"
    site = create_site(
        {
            "name": name, "backend": "slurm", "machine_procs": 128, "partition": "batch",
            "config": {"slurm_conf": conf, "workdir": TMP}, "trace": demo_trace(),
            "warm_up": True,
        },
        None,
    )  # fmt: skip
    for _ in range(args.queued):
        slurm(conf, *HELD_JOB, name)
    real, reads = bk.active_jobs, []

    def counted(s, backend=None):
        reads.append(1)
        return real(s, backend)

    bk.active_jobs = counted
    client = api_for(make_user("alice"))
    listed = len(json.loads(slurm(conf, "squeue", "--json"))["jobs"])
    live = len(slurm(conf, "squeue", "-h").splitlines())
    calls = {
        "status GET": lambda: client.get(f"/api/sites/{site.pk}/"),
        "prediction": lambda: client.post(
            f"/api/sites/{site.pk}/predict/", {"procs": 8, "time_limit_s": 600}, format="json"
        ),
    }
    rows = []
    try:
        for view_s in args.view_s:
            rows += [measure(label, view_s, call, args.requests, reads)
                     for label, call in calls.items()]  # fmt: skip
    finally:
        slurm(conf, "scancel", f"--name={name}")
        shutil.rmtree(TMP, ignore_errors=True)
    print(
        f"Slurm site: squeue --json lists {listed} jobs ({live} waiting or running; the "
        f"controller also lists jobs ended in the last MinJobAge), {args.requests} answers each"
    )
    print(table(rows, list(rows[0])))


if __name__ == "__main__":
    main()
