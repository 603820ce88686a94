"""The first request at a new past instant: its cost with lazily trained models against a
bundle trained ahead (``FittedBundle.train_ahead``), and that both answer the same.

    python benchmarks/bench_new_instant.py --dir DIR [--trace KTH-SP2-1996-2.1-cln]
        [--method WAIT] [--instants 6] [--requests 4] [--arm lazy|ahead|second]
        [--save out.npz] [--check ref.npz] [--shuffle] [--profile FILE] [--part test|tuning]

``DIR`` keeps a SQLite database (the trace ingested once), the store and ``lazy-<method>.pkl``:
the bundle of the service's methods (``--method`` overrides the wait method) fitted once
by ``fit_bundle`` and pickled before any prediction. Each arm loads that pickle:

- ``lazy``: answers as is (every model is trained by the first request that needs it);
- ``ahead``: ``train_ahead`` first (its CPU seconds printed), then answers;
- ``second``: ``train_ahead``, with the rows the previous arm stored kept (another process
  asking the same instants: the recent-error pools are read from the store).

Requests go through ``predict_wait`` (the API's function: wait, QBETS bound, trust block,
runtime rangeSet, accuracy, why), ``--requests`` per instant at ``--instants`` random
instants from 600 rows after the tuning part on (``--part tuning``: inside the tuning part;
ascending unless ``--shuffle``); the first
at an instant is "new instant", the others "warm". ``lazy`` and ``ahead`` remove the stored
rows first. ``--save`` keeps every answer (the JSON body and, per request, the core's wait
and runtime arrays from ``predict_requests``); ``--check`` compares with ``tobytes()``
against a saved run and prints how many differ.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pickle
import pstats
import sys
import time
from pathlib import Path

import numpy as np

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--dir", required=True)
ap.add_argument("--trace", default="KTH-SP2-1996-2.1-cln")
ap.add_argument("--method", default=None, help="wait method (default: the service's)")
ap.add_argument("--instants", type=int, default=6)
ap.add_argument("--requests", type=int, default=4)
ap.add_argument("--arm", choices=("lazy", "ahead", "second"), default="ahead")
ap.add_argument("--seed", type=int, default=0)
ap.add_argument("--shuffle", action="store_true")
ap.add_argument("--save")
ap.add_argument("--check")
ap.add_argument("--profile", help="cProfile of the requests into this file (and its top)")
ap.add_argument("--part", choices=("test", "tuning"), default="test",
                help="instants after the tuning part (their pools too) or inside it")  # fmt: skip
ARGS = ap.parse_args()
DIR = Path(ARGS.dir).resolve()
DIR.mkdir(parents=True, exist_ok=True)
os.environ["QUEUECAST_SQLITE_PATH"] = str(DIR / "db.sqlite3")
os.environ["QUEUECAST_UPLOAD_DIR"] = str(DIR / "uploads")
os.environ["QUEUECAST_FITTED_DIR"] = str(DIR / "fitted")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "queuecast.settings")
sys.path.insert(0, os.getcwd())  # the checkout being measured (run from its root)

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402

from predictor.core.bundle import fit_bundle  # noqa: E402
from predictor.services import predict as svc  # noqa: E402
from predictor.services.fitted_store import default_store  # noqa: E402
from traces.models import Trace  # noqa: E402
from traces.services import ingest_swf, swf_trace_for  # noqa: E402


def cpu() -> float:
    t = os.times()
    return t.user + t.system


def the_trace() -> Trace:
    call_command("migrate", verbosity=0)
    found = Trace.objects.filter(name=ARGS.trace).first()
    if found is not None:
        return found
    user = get_user_model().objects.get_or_create(username="bench")[0]
    traces = Path(os.environ.get("QUEUECAST_TRACES_DIR", "../shared/traces"))
    return ingest_swf(str(traces / f"{ARGS.trace}.swf.gz"), name=ARGS.trace, owner=user)


def lazy_bundle(trace: Trace):
    """The pickled, never-asked bundle (fitted here the first time)."""
    wait, runtime = svc.service_methods()
    wait = ARGS.method or wait
    path = DIR / f"lazy-{wait}.pkl"
    if not path.exists():
        swf = swf_trace_for(trace)
        c0, w0 = cpu(), time.perf_counter()
        bundle = fit_bundle(swf.jobs, int(trace.machine_procs or swf.machine_procs or 1),
                            wait_method=wait, runtime_method=runtime)  # fmt: skip
        print(f"fit ({wait}, {runtime}): {cpu() - c0:.1f} CPU-s, "
              f"{time.perf_counter() - w0:.1f} s wall", flush=True)  # fmt: skip
        path.write_bytes(pickle.dumps(bundle, protocol=pickle.HIGHEST_PROTOCOL))
    return pickle.loads(path.read_bytes())


def queries(trace: Trace, bundle) -> list[dict]:
    """Random requests at instants just after random rows from 600 rows past the tuning part
    on (so each instant's 300-job pool lies after it), or with ``--part tuning`` inside the
    tuning part (whose models were one per row until stop 52, docs/results.md)."""
    rng = np.random.default_rng(ARGS.seed)
    users = sorted(set(trace.jobs.values_list("user_id", flat=True)))
    submit = bundle.jobs["submit_time"].to_numpy(float)
    n_tune = bundle.wait_ctx.n_tune
    first, end = (1, n_tune) if ARGS.part == "tuning" else (n_tune + 600, submit.size)
    first = min(first, submit.size - 1)
    at = np.sort(submit[rng.integers(first, max(end, first + 1), ARGS.instants)] + 0.5)
    out = []
    for t in at:
        for _ in range(ARGS.requests):
            q = {"user_id": int(rng.choice(users)), "group_id": -1, "queue_id": -1,
                 "requested_procs": int(rng.integers(1, trace.machine_procs + 1)),
                 "requested_time": float(rng.integers(60, 86400)), "at": float(t)}  # fmt: skip
            if ARGS.method:
                q["method"] = ARGS.method
            out.append(q)
    if ARGS.shuffle:  # whole instants in a random order, an instant's requests together
        blocks = [out[k : k + ARGS.requests] for k in range(0, len(out), ARGS.requests)]
        out = [q for k in rng.permutation(len(blocks)) for q in blocks[k]]
    return out


def core_arrays(bundle, query: dict) -> list[np.ndarray]:
    request = svc.request_of(bundle, query)
    ans = svc.predict_requests(bundle, bundle.snapshot(request.submit_s), [request])[0]
    rs = ans.runtime
    return [np.array([ans.wait_s, ans.wait_upper_s if ans.wait_upper_s is not None else -1.0]),
            rs.low_s, rs.high_s, rs.probability, np.array([rs.point_s])]  # fmt: skip


def main() -> None:
    trace = the_trace()
    bundle = lazy_bundle(trace)
    store = default_store()
    ident, version = svc.store_key(trace)
    if ARGS.arm != "second":  # no per-instant value stored by an earlier run
        for path in store.dir.glob("*.pkl"):
            if path.name.startswith(("rows-", "runtime_accuracy_", "runtime_rows_")):
                path.unlink()
    ahead = DIR / f"ahead-{ARGS.method or svc.service_methods()[0]}.pkl"
    if ARGS.arm in ("ahead", "second") and ahead.exists():
        bundle = pickle.loads(ahead.read_bytes())  # trained ahead by an earlier run
    elif ARGS.arm in ("ahead", "second"):
        c0, w0 = cpu(), time.perf_counter()
        bundle.train_ahead()
        print(f"train_ahead: {cpu() - c0:.1f} CPU-s, {time.perf_counter() - w0:.1f} s wall",
              flush=True)  # fmt: skip
        ahead.write_bytes(pickle.dumps(bundle, protocol=pickle.HIGHEST_PROTOCOL))
    cache = svc.BUNDLES
    if ARGS.method:
        wait, runtime = ARGS.method, svc.service_methods()[1]
        cache = svc.OVERRIDES.setdefault((wait, runtime), svc.FittedCache(
            2, lambda t: None, store=default_store, kind=f"trace-{wait}-{runtime}"))  # fmt: skip
    cache.kept.put((trace.pk, trace.job_count, trace.finished_at), bundle)
    rows, bodies, arrays, seen = [], [], [], set()
    profile = cProfile.Profile() if ARGS.profile else None
    for q in queries(trace, bundle):
        if profile is not None:
            profile.enable()
        c0, w0 = cpu(), time.perf_counter()
        body = svc.predict_wait(trace, q)
        wall, used = time.perf_counter() - w0, cpu() - c0
        if profile is not None:
            profile.disable()
        kind = "warm" if q["at"] in seen else "new instant"
        seen.add(q["at"])
        rows.append((kind, wall, used))
        bodies.append(json.dumps(body, sort_keys=True))
        arrays.append(core_arrays(bundle, q))
        if kind == "new instant":
            print(f"  new instant {q['at']:.0f}: {wall:.2f} s wall, {used:.2f} CPU-s", flush=True)
    for kind in ("new instant", "warm"):
        w = np.array([r[1] for r in rows if r[0] == kind]) * 1000
        c = np.array([r[2] for r in rows if r[0] == kind]) * 1000
        if w.size:
            print(f"{ARGS.arm} {kind}: n={w.size} wall ms p50 {np.median(w):.1f} max "
                  f"{w.max():.1f}; CPU ms mean {c.mean():.1f} max {c.max():.1f}")  # fmt: skip
    if profile is not None:
        profile.dump_stats(ARGS.profile)
        pstats.Stats(ARGS.profile).sort_stats("cumulative").print_stats(35)
    flat = [a for per in arrays for a in per]
    if ARGS.save:
        np.savez(ARGS.save, *flat, bodies=np.array(bodies))
    if ARGS.check:
        ref = np.load(ARGS.check)
        ref_flat = [ref[f"arr_{k}"] for k in range(len(flat))]
        differ = sum(a.tobytes() != b.tobytes() for a, b in zip(flat, ref_flat, strict=True))
        body_differ = sum(a != b for a, b in zip(bodies, ref["bodies"].tolist(), strict=True))
        print(f"check against {ARGS.check}: {len(flat)} arrays, {differ} differ (tobytes); "
              f"{len(bodies)} API bodies, {body_differ} differ")  # fmt: skip


if __name__ == "__main__":
    main()
