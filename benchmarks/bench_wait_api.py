"""Latency of a queue-wait prediction over the API (POST /api/traces/{id}/predictions/wait)
against a trace detail GET (GET /api/traces/{id}/) in the same process, per shared log.

    python benchmarks/bench_wait_api.py [--traces KTH-SP2-1996-2.1-cln,HPC2N-2002-2.2-cln]
        [--calls 100] [--seed 0] [--profile [cumulative|tottime]] [--profile-out FILE]

Uses the Django test client against a throwaway SQLite database in a temporary folder. Per
trace: ingests it, times the first call (it starts the bundle's fit in the background and
waits ``QUEUECAST_FIT_WAIT_S``, then answers 503 "being fitted"), the 503s until the bundle is
stored ("ready after": the fit of the state sweep, the wait method, QBETS and the runtime
method), then ``--calls`` predictions at random instants after the tuning part (from 600
rows past it) with random users and sizes ("new instant": the recent-error pool of an
instant nobody asked about yet predicts the jobs that started since the instants seen
before), the same bodies again ("warm": the instant's pool is known), and as many detail
GETs. The ratio is warm p50 over the GET's p50; "warm gc" is the time the cyclic garbage
collector ran during the warm calls, per call, and "full gc pass" the time of one full
collection forced after them (a request waits that long when the collector runs one). Each
warm call is followed by one GET, so that a machine whose speed drifts during the run (a
shared host: runs of the same code differed by 20%) moves both figures of the ratio alike
(under ``--profile`` the GETs run after the warm calls). A GET right after an answer costs
more than one in a run of GETs (probably: the answer has displaced what a run of GETs keeps
in the processor's caches), so the GETs are also timed one after another ("GET in a row"),
and both ratios are printed. Those runs of GETs come after each block of 25 warm calls,
not all after the last: timed minutes later, on a host that had sped up in between, they
once made HPC2N's ratio 3.6 where the GETs in turn gave 2.5 (stop 47).
``--profile [key]`` prints the top of cProfile over the warm calls, sorted by ``key``
(``cumulative`` unless given, or ``tottime``); the warm timings are then the profiled ones;
``--profile-out FILE`` also writes the whole profile there (``pstats`` format, the trace's name
appended) for a closer look. A log without a known wait (SWF field 3 is -1 everywhere) answers
409 and gets a row saying so.
"""

from __future__ import annotations

import argparse
import atexit
import cProfile
import gc
import os
import pstats
import shutil
import tempfile
import time
from pathlib import Path

from _common import table, traces_dir

TMP = tempfile.mkdtemp(prefix="bench_wait_api_")
atexit.register(shutil.rmtree, TMP, ignore_errors=True)  # a fitted HPC2N bundle is ~1.9 GB
os.environ["QUEUECAST_SQLITE_PATH"] = str(Path(TMP) / "bench.sqlite3")
os.environ["QUEUECAST_UPLOAD_DIR"] = str(Path(TMP) / "uploads")
os.environ["QUEUECAST_FITTED_DIR"] = str(Path(TMP) / "fitted")
# The fit's child stops once the bundle is stored: warming every row after it would make the
# "new instant" calls warm and share the cores with the timed ones.
os.environ["QUEUECAST_WARM_AFTER_FIT"] = "0"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "queuecast.settings")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from rest_framework.test import APIClient  # noqa: E402

from predictor.core.bundle import TUNE_FRACTION  # noqa: E402
from traces.services import ingest_swf  # noqa: E402


def random_bodies(trace, jobs_users: np.ndarray, n: int, rng: np.random.Generator) -> list[dict]:
    """Random users and sizes at instants just after random rows from 600 rows past the tuning
    part on (so each instant's 300-job pool lies after it, as ``bench_server_load`` draws
    them: a pool reaching into the tuning part trains a GBM model per tuning row when first
    asked, minutes on KTH)."""
    rows = np.array(trace.jobs.order_by("submit_time", "id").values_list("submit_time", "queue_id"))
    submit, queue = rows[:, 0].astype(float), rows[:, 1].astype(int)
    first = min(int(TUNE_FRACTION * submit.size) + 600, submit.size - 1)
    picked = rng.integers(first, submit.size, n)
    return [
        {
            "user_id": int(rng.choice(jobs_users)),
            "group_id": -1,
            "queue_id": int(queue[r]),  # the row's own queue (a log of several has no default)
            "requested_procs": int(rng.integers(1, trace.machine_procs + 1)),
            "requested_time": float(rng.integers(60, 86400)),
            "at": min(float(submit[r]) + 0.5, float(submit[-1])),
        }
        for r in picked.tolist()
    ]


class GcClock:
    """Milliseconds the cyclic garbage collector ran (``gc.callbacks``), and how often."""

    def __init__(self) -> None:
        self.ms, self.runs, self._began = 0.0, 0, 0.0
        self.by_generation = [[0, 0.0], [0, 0.0], [0, 0.0]]  # runs, ms

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._began = time.perf_counter()
        else:
            ms = 1000 * (time.perf_counter() - self._began)
            self.ms += ms
            self.runs += 1
            self.by_generation[info["generation"]][0] += 1
            self.by_generation[info["generation"]][1] += ms

    def __str__(self) -> str:
        gens = ", ".join(f"gen{g} {n} x {ms / max(n, 1):.1f} ms"
                         for g, (n, ms) in enumerate(self.by_generation) if n)  # fmt: skip
        return gens or "none"


def timed(call, items: list, clock: GcClock | None = None) -> np.ndarray:
    """Milliseconds of ``call(item)`` per item (each answer must be 200); ``clock`` counts
    the garbage collector's share."""
    out = []
    if clock is not None:
        gc.callbacks.append(clock)
    try:
        for item in items:
            started = time.perf_counter()
            res = call(item)
            out.append(1000 * (time.perf_counter() - started))
            assert res.status_code == 200, res.content
    finally:
        if clock is not None:
            gc.callbacks.remove(clock)
    return np.array(out)


ROW_BLOCK = 25  # answers (each with a GET in turn), then as many GETs one after another


def interleaved(
    post, get, bodies: list, clock: GcClock
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Milliseconds of each ``post(body)`` and of a ``get`` after it, in turn (the
    collector's share counted on the posts), and, after each ``ROW_BLOCK`` of them, as many
    GETs in a row: a machine whose speed drifts over a run moves all three figures alike,
    so their ratios hold."""
    posts, gets, in_a_row = [], [], []
    for first in range(0, len(bodies), ROW_BLOCK):
        block = bodies[first : first + ROW_BLOCK]
        for body in block:
            posts.append(timed(post, [body], clock))
            gets.append(timed(get, [None]))
        in_a_row.append(timed(get, range(len(block))))
    return np.concatenate(posts), np.concatenate(gets), np.concatenate(in_a_row)


def bench(
    name: str, client: APIClient, calls: int, seed: int, profile: str | None, out: str | None
) -> dict:
    trace = ingest_swf(traces_dir() / f"{name}.swf.gz", name=name)
    url = f"/api/traces/{trace.pk}/predictions/wait"
    users = np.unique(np.asarray(trace.jobs.values_list("user_id", flat=True)))
    bodies = random_bodies(trace, users, calls + 1, np.random.default_rng(seed))
    started = time.perf_counter()
    first = client.post(url, bodies[0], format="json")
    first_ms = 1000 * (time.perf_counter() - started)
    busy = []  # a request never fits: 503 "being fitted" until the background fit is stored
    while first.status_code == 503 and first.json().get("status") == "fitting":
        time.sleep(1.0)
        asked = time.perf_counter()
        first = client.post(url, bodies[0], format="json")
        busy.append(1000 * (time.perf_counter() - asked))
    cold = time.perf_counter() - started
    if first.status_code == 409:  # a log without a known wait (the Lublin model logs)
        return {"trace": name, "jobs": trace.job_count, "first answer ms": "409: no known wait"}
    assert first.status_code == 200, first.content

    def post(body: dict):
        return client.post(url, body, format="json")

    def get(_):
        return client.get(f"/api/traces/{trace.pk}/")

    new = timed(post, bodies[1:])
    prof = cProfile.Profile() if profile else None
    warm_gc = GcClock()
    if prof:
        prof.enable()
        warm = timed(post, bodies[1:], warm_gc)
        prof.disable()
        pstats.Stats(prof).sort_stats(profile).print_stats(30)
        if out:
            prof.dump_stats(f"{out}.{name}")
        detail = timed(get, range(calls))
        in_a_row = timed(get, range(calls))  # the GETs one after another
    else:  # each warm answer and a GET in turn, GETs in a row between blocks of them
        warm, detail, in_a_row = interleaved(post, get, bodies[1:], warm_gc)
    began = time.perf_counter()
    gc.collect()  # one full pass now: what a request waits for when the collector runs one
    full_ms = 1000 * (time.perf_counter() - began)
    return {
        "trace": name,
        "jobs": trace.job_count,
        "first answer ms": f"{first_ms:.0f}",
        "503 while fitting": len(busy),
        "503 max ms": f"{max(busy, default=0):.0f}",
        "ready after s": f"{cold:.1f}",
        "calls": calls,
        "new instant p50 ms": f"{np.percentile(new, 50):.1f}",
        "new instant p99 ms": f"{np.percentile(new, 99):.1f}",
        "warm p50 ms": f"{np.percentile(warm, 50):.1f}",
        "warm p99 ms": f"{np.percentile(warm, 99):.1f}",
        "detail GET p50 ms": f"{np.percentile(detail, 50):.1f}",
        "warm / GET": f"{np.percentile(warm, 50) / np.percentile(detail, 50):.1f}",
        "GET in a row p50 ms": f"{np.percentile(in_a_row, 50):.1f}",
        "warm / GET in a row": f"{np.percentile(warm, 50) / np.percentile(in_a_row, 50):.1f}",
        "warm gc ms/call": f"{warm_gc.ms / max(len(warm), 1):.2f} ({warm_gc})",
        "full gc pass ms": f"{full_ms:.1f}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", default="KTH-SP2-1996-2.1-cln,HPC2N-2002-2.2-cln")
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--profile",
        nargs="?",
        const="cumulative",
        default=None,
        help="print cProfile of the warm calls, sorted by this key (cumulative, tottime)",
    )
    parser.add_argument("--profile-out", default=None, help="also write the profile here")
    args = parser.parse_args()
    if args.profile_out and not args.profile:
        args.profile = "cumulative"
    call_command("migrate", verbosity=0)
    client = APIClient()
    client.force_authenticate(get_user_model().objects.create_user("bench"))
    rows = []
    for name in args.traces.split(","):  # each row as soon as it is measured
        rows.append(bench(name, client, args.calls, args.seed, args.profile, args.profile_out))
        print(rows[-1], flush=True)
    print(table(rows, list(rows[0])))


if __name__ == "__main__":
    main()
