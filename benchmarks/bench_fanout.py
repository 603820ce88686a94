"""Evaluation runs across Celery workers: wall time with 1, 2, ... worker processes.

    python benchmarks/bench_fanout.py [--trace HPC2N-2002-2.2-cln.swf.gz] [--workers 1 2]
        [--kind wait] [--methods apq,qbets,ibl,median,gbm,sim,zero] [--limit N]

Needs PostgreSQL and Redis (``DATABASE_URL``, default the local ``queuecast_bench`` database,
created when missing; ``CELERY_BROKER_URL``, default local Redis database 14). For each worker
count it starts ``celery -A queuecast worker -c N`` on a private queue, submits one evaluation
run of the whole test part of ``$QUEUECAST_TRACES_DIR/<trace>`` (``predictor.services.fanout`` cuts
it into chunk tasks), waits for it and prints the wall time, the chunks each pool process answered,
and whether every method's figures equal the first run's (they must: the chunks merge into the
one-process answer).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import uuid
from urllib.parse import urlparse

from _common import ROOT, table, traces_dir

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/queuecast_bench"


def setup_django(queue: str) -> None:
    os.environ.setdefault("DATABASE_URL", DEFAULT_DB)
    os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/14")
    os.environ["QUEUECAST_CELERY_QUEUE"] = queue
    os.environ["DJANGO_SETTINGS_MODULE"] = "queuecast.settings"
    url = urlparse(os.environ["DATABASE_URL"])
    name = url.path.lstrip("/")
    exists = subprocess.run(
        ["psql", "-h", url.hostname or "127.0.0.1", "-U", url.username or "postgres", "-tAc",
         f"SELECT 1 FROM pg_database WHERE datname = '{name}'", "postgres"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if exists.stdout.strip() != "1":
        subprocess.run(
            ["createdb", "-h", url.hostname or "127.0.0.1", "-U", url.username or "postgres", name],
            check=True,
        )
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def start_worker(queue: str, concurrency: int, log_path: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "celery", "-A", "queuecast", "worker", "-P", "prefork",
               "-c", str(concurrency), "-Q", queue, "-n", f"{queue}-{concurrency}@%h",
               "--without-gossip", "--without-mingle", "--loglevel=WARNING"]  # fmt: skip
    log = open(log_path, "wb")  # closed with the process
    return subprocess.Popen(command, cwd=ROOT, env=os.environ.copy(), stdout=log, stderr=log)


def run_once(args: argparse.Namespace, swf: str, workers: int, log_path: str) -> dict:
    from predictor.models import EvaluationRun
    from predictor.services import evaluations
    from queuecast.longrun import enqueue

    worker = start_worker(os.environ["QUEUECAST_CELERY_QUEUE"], workers, log_path)
    try:
        time.sleep(3)  # the worker connects
        params = {"seed": 0, **({"limit": args.limit} if args.limit else {})}
        run = evaluations.new_run(
            kind=args.kind, swf_path=swf, methods=args.methods.split(","), params=params
        )
        started = time.perf_counter()
        enqueue(run, "predictor.tasks_wait.run_evaluation")
        while True:
            run.refresh_from_db()
            if run.status in ("done", "failed"):
                break
            print(f"\r{workers} worker(s): {run.progress:6.1%}", end="", file=sys.stderr)
            time.sleep(2)
        wall = time.perf_counter() - started
        print(file=sys.stderr)
        if run.status != "done":
            sys.exit(f"run {run.pk} failed: {run.error}")
        return {"wall_s": wall, "run": EvaluationRun.objects.get(pk=run.pk)}
    finally:
        worker.terminate()
        worker.wait(timeout=60)


def figures(run) -> dict:
    keys = ("aae_s", "correct_share", "success_rate", "coverage")
    return {m: {k: r.get(k) for k in keys if k in r} for m, r in run.result.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default="HPC2N-2002-2.2-cln.swf.gz")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--kind", choices=["wait", "runtime"], default="wait")
    parser.add_argument("--methods", default="apq,qbets,ibl,median,gbm,sim,zero")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--log-dir", default="/tmp")
    args = parser.parse_args()
    swf = str(traces_dir() / args.trace)
    queue = f"queuecast-bench-{uuid.uuid4().hex[:8]}"
    setup_django(queue)
    rows, first = [], None
    for n in args.workers:
        out = run_once(args, swf, n, os.path.join(args.log_dir, f"{queue}-{n}.log"))
        run = out["run"]
        fan = run.params.get("fanout", {})
        same = "-" if first is None else ("yes" if figures(run) == first else "NO")
        first = first or figures(run)
        rows.append({
            "worker processes": n, "wall s": f"{out['wall_s']:.0f}",
            "targets": run.params.get("selection", {}).get("targets", run.params.get("n_targets")),
            "chunks": fan.get("chunks"),
            "chunks per process": " ".join(str(v) for v in sorted(fan.get("workers", {}).values())),
            "same figures": same,
        })  # fmt: skip
        print(table(rows[-1:], list(rows[-1])), flush=True)
    print()
    print(f"{args.kind} evaluation of {args.trace}, methods {args.methods}")
    print(table(rows, list(rows[0])))


if __name__ == "__main__":
    main()
