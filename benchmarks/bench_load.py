"""Database load rate of the ingest: rows per second on the largest shared trace.

    python benchmarks/bench_load.py [--postgres URL] [--repeat 3]

SQLite runs on a temporary file; PostgreSQL runs when ``--postgres`` or
``DATABASE_URL=postgres://...`` is given, in a scratch database created next to
the one named (``queuecast_bench_<pid>``) and dropped afterwards. Each backend
runs in a child process (Django settings are per process): migrate, then
``traces.services.ingest_swf`` ``repeat`` times; the best run is reported.
``load`` is the ingest minus the parse (insert + summary + commit).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlparse, urlunparse

from _common import ROOT, largest_trace, table

COLUMNS = ["backend", "jobs", "parse s", "load s", "ingest s", "load rows/s", "ingest rows/s"]


def child(path: Path, repeat: int) -> dict:
    """Runs inside the child process: Django set up from the environment."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "queuecast.settings")
    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from traces.core.swf import read_swf
    from traces.models import Trace
    from traces.services import ingest_swf

    call_command("migrate", verbosity=0)
    parse_s = min(_timed(lambda: read_swf(path))[1] for _ in range(repeat))
    best, jobs = float("inf"), 0
    for _ in range(repeat):
        Trace.objects.filter(name="bench-load").delete()
        trace, seconds = _timed(lambda: ingest_swf(path, name="bench-load"))
        best, jobs = min(best, seconds), trace.job_count
    Trace.objects.filter(name="bench-load").delete()
    return {"backend": connection.vendor, "jobs": jobs, "parse_s": parse_s, "ingest_s": best}


def _timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def run_child(env: dict[str, str], path: Path, repeat: int) -> dict:
    command = [sys.executable, __file__, "--child", str(path), "--repeat", str(repeat)]
    done = subprocess.run(
        command, env={**os.environ, **env}, cwd=ROOT, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        sys.exit(f"benchmark child failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


@contextmanager
def scratch_postgres(url: str):
    """A fresh database on the server of ``url``; yields its URL, drops it after."""
    import psycopg2

    parsed = urlparse(url)
    name = f"queuecast_bench_{os.getpid()}"
    admin = psycopg2.connect(urlunparse(parsed._replace(path="/postgres")))
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunparse(parsed._replace(path=f"/{name}"))
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def row(result: dict) -> dict:
    load_s = result["ingest_s"] - result["parse_s"]
    return {
        "backend": result["backend"],
        "jobs": f"{result['jobs']:,}",
        "parse s": f"{result['parse_s']:.2f}",
        "load s": f"{load_s:.2f}",
        "ingest s": f"{result['ingest_s']:.2f}",
        "load rows/s": f"{result['jobs'] / load_s:,.0f}",
        "ingest rows/s": f"{result['jobs'] / result['ingest_s']:,.0f}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", help="postgres://... (default: DATABASE_URL if postgres)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.repeat)))
        return
    path = largest_trace()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        sqlite = {"DATABASE_URL": "", "QUEUECAST_SQLITE_PATH": str(Path(tmp) / "bench.sqlite3")}
        results.append(run_child(sqlite, path, args.repeat))
    postgres = args.postgres or os.environ.get("DATABASE_URL", "")
    if postgres.startswith("postgres"):
        with scratch_postgres(postgres) as url:
            results.append(run_child({"DATABASE_URL": url}, path, args.repeat))
    print(f"{path.name}, best of {args.repeat}")
    print(table([row(r) for r in results], COLUMNS))


if __name__ == "__main__":
    main()
