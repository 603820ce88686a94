"""Speed of the one prediction call: ``predict_requests(bundle, snapshot, candidates)``.

Fits one bundle per wait method on a trace, then for ``--arrivals`` jobs of its test part
(evenly spread) builds the snapshot at the job's arrival and asks for ``--candidates`` sizes
of its request in one batch, as a molding arrival does. Prints, per wait method, the fit time,
the time per arrival and the predictions per second, with the share spent in the wait, bound
and runtime methods (the snapshot is built before the clock starts: a replay gets it from the
simulator). ``pred/cpu-s`` divides by the process's CPU time instead of the wall clock:
predictions per second per core, and much less sensitive to other work on the machine.
``wait pred/cpu-s`` is the same for the wait method's own ``predict`` alone (the whole call
adds the QBETS bound and the runtime rangeSet); for ``auto`` each expert's own rate follows
on a line ``auto:<expert>``, so auto's cost can be read against its members'. ``--profile``
prints cProfile's top of each method's timed pass (its rates are then the profiler's). The first
pass (the per-part timings) warms the per-arrival caches, as a replay's earlier arrivals do.

    python manage.py bench_predict --swf $QUEUECAST_TRACES_DIR/KTH-SP2-1996-2.1-cln.swf.gz \\
        --wait-methods apq,qbets,gbm,median --arrivals 50 --candidates 8
"""

from __future__ import annotations

import cProfile
import io
import pstats
import time
from typing import Any

import numpy as np
from django.core.management.base import BaseCommand, CommandError, CommandParser

from predictor.core.bundle import fit_bundle, predict_requests
from predictor.core.state.request import RequestBatch, as_batch
from predictor.core.state.snapshot import Snapshot, from_log
from predictor.core.wait.registry import parse_methods
from queuecast.progress import progress_bar
from traces.services import resolve_trace


class Command(BaseCommand):
    help = "Predictions per second of predict_requests for molding-style batches."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("trace_name", nargs="?", help="a stored trace")
        parser.add_argument("--swf", help="an SWF file (.swf or .swf.gz) instead")
        parser.add_argument("--wait-methods", default="apq,qbets,gbm,median")
        parser.add_argument("--arrivals", type=int, default=50)
        parser.add_argument("--candidates", type=int, default=8)
        parser.add_argument(
            "--profile", action="store_true", help="cProfile of each method's timed pass (top 25)"
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            methods = parse_methods(opts["wait_methods"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if opts["arrivals"] < 1 or opts["candidates"] < 1:
            raise CommandError("--arrivals and --candidates must be >= 1")
        swf = resolve_trace(opts["trace_name"], opts["swf"])
        procs = int(swf.machine_procs or 1)
        jobs = swf.jobs
        rows = np.linspace(int(0.2 * len(jobs)), len(jobs) - 1, opts["arrivals"]).astype(int)
        sizes = np.unique(np.geomspace(1, procs, opts["candidates"]).round().astype(int))
        snaps = [from_log(jobs, float(jobs["submit_time"].iat[i]), machine_procs=procs, rows=int(i))
                 for i in rows]  # fmt: skip
        base = RequestBatch.from_jobs(jobs.iloc[rows])
        batches = [as_batch([base.request(k).with_procs(int(p)) for p in sizes])
                   for k in range(len(rows))]  # fmt: skip
        self.stdout.write(
            f"{len(rows)} arrivals x {len(sizes)} candidates ({', '.join(map(str, sizes))})"
        )
        self.stdout.write(
            f"{'wait method':<16}{'fit s':>8}{'ms/arrival':>12}{'pred/s':>9}{'pred/cpu-s':>12}"
            f"{'wait pred/cpu-s':>17}{'wait ms':>9}{'bound ms':>10}{'runtime ms':>12}"
        )
        n_pred = len(rows) * len(sizes)
        for name in methods:
            with progress_bar(f"fit {name}") as bar:
                bar(0.0)
                bundle = fit_bundle(jobs, procs, wait_method=name)
                bar(1.0)
            pairs = list(zip(snaps, batches, strict=True))
            parts = {p: _clock(getattr(bundle, p), pairs) for p in ("wait", "bound", "runtime")}
            wait_cpu = _clock(bundle.wait, pairs)[1]  # again: the first pass warmed its caches
            profile = cProfile.Profile() if opts["profile"] else None
            t0, c0 = time.perf_counter(), time.process_time()
            if profile is not None:
                profile.enable()
            for snap, batch in pairs:
                predict_requests(bundle, snap, batch)
            if profile is not None:
                profile.disable()
            total, cpu = time.perf_counter() - t0, time.process_time() - c0
            cells = [1000 * parts[p][0] / len(rows) for p in ("wait", "bound", "runtime")]
            self.stdout.write(
                f"{name:<16}{bundle.fit_s:>8.1f}{1000 * total / len(rows):>12.1f}"
                f"{n_pred / total:>9.0f}{n_pred / max(cpu, 1e-9):>12.0f}"
                f"{n_pred / max(wait_cpu, 1e-9):>17.0f}"
                + f"{cells[0]:>9.1f}{cells[1]:>10.1f}{cells[2]:>12.1f}"
            )
            if profile is not None:
                out = io.StringIO()
                pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(25)
                self.stdout.write(out.getvalue())
            for member, method in getattr(bundle.wait, "methods_", {}).items():
                member_cpu = _clock(method, pairs)[1]
                self.stdout.write(
                    f"{'  ' + name + ':' + member:<16}{'':>8}{'':>12}{'':>9}{'':>12}"
                    f"{n_pred / max(member_cpu, 1e-9):>17.0f}"
                    f"{1000 * member_cpu / len(rows):>9.1f}"
                )


def _clock(method: Any, pairs: list[tuple[Snapshot, RequestBatch]]) -> tuple[float, float]:
    """(wall s, CPU s) of ``method.predict`` over every (snapshot, batch) pair."""
    t0, c0 = time.perf_counter(), time.process_time()
    for snap, batch in pairs:
        method.predict(snap, batch)
    return time.perf_counter() - t0, time.process_time() - c0
