"""Latency of one queue-wait prediction over the API (POST /api/traces/{id}/predictions/wait).

    python benchmarks/bench_wait_api.py [--trace KTH-SP2-1996-2.1-cln] [--calls 200] [--seed 0]

Uses the Django test client against a throwaway SQLite database in a temporary folder:
ingests the shared trace, times the first call (it fits the state sweep, APQ and QBETS
and caches them), then ``--calls`` calls with random users, sizes and times, and prints
the p50/p99 latency of those.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from _common import table, traces_dir

TMP = tempfile.mkdtemp(prefix="bench_wait_api_")
os.environ["QUEUECAST_SQLITE_PATH"] = str(Path(TMP) / "bench.sqlite3")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "queuecast.settings")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from rest_framework.test import APIClient  # noqa: E402

from traces.services import ingest_swf  # noqa: E402


def random_bodies(trace, jobs_users: np.ndarray, n: int, rng: np.random.Generator) -> list[dict]:
    lo, hi = trace.first_submit_s, trace.last_submit_s
    return [
        {
            "user_id": int(rng.choice(jobs_users)),
            "group_id": -1,
            "queue_id": -1,
            "requested_procs": int(rng.integers(1, trace.machine_procs + 1)),
            "requested_time": float(rng.integers(60, 86400)),
            "at": float(rng.uniform(lo + 0.2 * (hi - lo), hi)),
        }
        for _ in range(n)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default="KTH-SP2-1996-2.1-cln")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    trace = ingest_swf(traces_dir() / f"{args.trace}.swf.gz", name=args.trace)
    client = APIClient()
    client.force_authenticate(get_user_model().objects.create_user("bench"))
    url = f"/api/traces/{trace.pk}/predictions/wait"
    users = np.unique(np.asarray(trace.jobs.values_list("user_id", flat=True)))
    bodies = random_bodies(trace, users, args.calls + 1, np.random.default_rng(args.seed))
    started = time.perf_counter()
    first = client.post(url, bodies[0], format="json")
    cold = time.perf_counter() - started
    assert first.status_code == 200, first.content
    times = []
    for body in bodies[1:]:
        started = time.perf_counter()
        res = client.post(url, body, format="json")
        times.append(time.perf_counter() - started)
        assert res.status_code == 200, res.content
    ms = np.array(times) * 1000
    row = {
        "trace": args.trace,
        "jobs": trace.job_count,
        "first call (fit) s": f"{cold:.2f}",
        "calls": len(ms),
        "p50 ms": f"{np.percentile(ms, 50):.1f}",
        "p99 ms": f"{np.percentile(ms, 99):.1f}",
        "max ms": f"{ms.max():.1f}",
    }
    print(table([row], list(row)))


if __name__ == "__main__":
    main()
