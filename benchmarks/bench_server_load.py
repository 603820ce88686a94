"""Load on the production server: wait predictions from 8 and 32 concurrent clients, on a
stored trace at past instants and on a live (simulated) site at "now".

    python benchmarks/bench_server_load.py [--trace KTH-SP2-1996-2.1-cln] [--clients 8 32]
        [--seconds 20] [--workers 2] [--threads 4] [--no-site] [--warm-rows] [--reuse DIR]

Starts gunicorn (``queuecast/gunicorn_conf.py``, the command of ``scripts/serve``) on a free
loopback port over a throwaway SQLite database, ingests the shared trace, fits the
trace's bundle once in the background (the workers answer 503 "being fitted" meanwhile, and
the warm-up waits), then runs closed-loop clients (one thread
and one keep-alive connection each) posting ``/api/traces/{id}/predictions/wait`` with
random users, sizes and times for ``--seconds``. Then (unless ``--no-site``) the same against
``/api/sites/{id}/predict/`` of a simulated site replaying the trace, its history warmed up
from the trace: every request asks about "now", the live queue read from the database.
With ``--warm-rows`` the setup first runs ``warm_predictions`` (the workers load the stored
bundle and row predictions instead of fitting); ``--reuse DIR`` serves an earlier run's folder
(its database, fitted bundle and rows: no ingest, no fit). Prints requests/s, p50/p99/max
latency and the error count per target and client count.
Goals (issues 11 and 18): p99 < 100 ms and >= 200 req/s at 32 clients, 0 errors.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
from _common import ROOT, table, traces_dir

SETUP = """
import os, django
os.environ["DJANGO_SETTINGS_MODULE"] = "queuecast.settings"
django.setup()
from django.core.management import call_command
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from traces.services import ingest_swf
call_command("migrate", verbosity=0)
user = get_user_model().objects.create_user("bench")
trace = ingest_swf(os.environ["BENCH_TRACE"], name="bench", owner=user)
users = sorted(set(trace.jobs.values_list("user_id", flat=True)))
site = None
if os.environ.get("BENCH_SITE") == "1":
    from holdqueue.services.sites import create_site
    site = create_site({"name": "bench-site", "backend": "simulated", "partition": "",
                        "trace": trace, "config": {"speed": 1.0}, "warm_up": True}, user).pk
if os.environ.get("BENCH_WARM") == "1":
    from predictor.services.predict import warm_rows
    warm_rows(trace)  # fits and stores the bundle and every row's prediction for the workers
print(json.dumps({"id": trace.pk, "site": site, "token": Token.objects.create(user=user).key,
                  "users": users, "lo": trace.first_submit_s, "hi": trace.last_submit_s,
                  "procs": trace.machine_procs}))
"""


REUSE = """
import os, django
os.environ["DJANGO_SETTINGS_MODULE"] = "queuecast.settings"
django.setup()
from django.core.management import call_command
from rest_framework.authtoken.models import Token
from holdqueue.models import Site
from traces.models import Trace
call_command("migrate", verbosity=0)
trace = Trace.objects.get(name="bench")
site = Site.objects.filter(name="bench-site").first()
users = sorted(set(trace.jobs.values_list("user_id", flat=True)))
token = Token.objects.get_or_create(user=trace.owner)[0].key
print(json.dumps({"id": trace.pk, "site": site.pk if site else None, "token": token,
                  "users": users, "lo": trace.first_submit_s, "hi": trace.last_submit_s,
                  "procs": trace.machine_procs}))
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def bodies(
    info: dict, n: int, seed: int, method: str | None = None, instants: int = 0
) -> list[bytes]:
    """Random queries in the test part; ``instants`` > 0 draws ``at`` from that many instants
    (their recent-error pools computed once per worker), ``method`` asks for that method."""
    rng = np.random.default_rng(seed)
    lo, hi = info["lo"], info["hi"]
    pool = rng.uniform(lo + 0.2 * (hi - lo), hi, instants or n)
    return [
        json.dumps(
            {
                "user_id": int(rng.choice(info["users"])),
                "group_id": -1,
                "queue_id": -1,
                "requested_procs": int(rng.integers(1, info["procs"] + 1)),
                "requested_time": float(rng.integers(60, 86400)),
                "at": float(rng.choice(pool)),
                **({"method": method} if method else {}),
            }
        ).encode()
        for _ in range(n)
    ]


def site_bodies(info: dict, n: int, seed: int) -> list[bytes]:
    rng = np.random.default_rng(seed)
    return [
        json.dumps(
            {
                "procs": int(rng.integers(1, info["procs"] + 1)),
                "time_limit_s": int(rng.integers(60, 86400)),
            }
        ).encode()
        for _ in range(n)
    ]


class Client(threading.Thread):
    """One closed-loop client: post, wait for the answer, post again, until ``stop``."""

    def __init__(self, port: int, path: str, token: str, payloads: list[bytes], stop) -> None:
        super().__init__(daemon=True)
        self.port, self.path, self.payloads, self.stop = port, path, payloads, stop
        self.headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
        self.latencies: list[float] = []
        self.errors: list[str] = []

    def run(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        k = 0
        while not self.stop.is_set():
            body = self.payloads[k % len(self.payloads)]
            k += 1
            started = time.perf_counter()
            try:
                conn.request("POST", self.path, body=body, headers=self.headers)
                response = conn.getresponse()
                response.read()
                if response.status != 200:
                    self.errors.append(str(response.status))
            except (OSError, http.client.HTTPException) as exc:
                self.errors.append(type(exc).__name__)
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
                continue
            self.latencies.append(time.perf_counter() - started)
        conn.close()


def load(port: int, path: str, token: str, payloads: list[bytes], n: int, seconds: float) -> dict:
    stop = threading.Event()
    clients = [Client(port, path, token, payloads[k::n], stop) for k in range(n)]
    started = time.perf_counter()
    for client in clients:
        client.start()
    time.sleep(seconds)
    stop.set()
    for client in clients:
        client.join()
    elapsed = time.perf_counter() - started
    ms = np.array([t for c in clients for t in c.latencies]) * 1000
    errors = [e for c in clients for e in c.errors]
    return {
        "target": "site now" if "/sites/" in path else "trace past",
        "clients": n,
        "requests": len(ms),
        "errors": len(errors),
        "req/s": f"{len(ms) / elapsed:.0f}",
        "p50 ms": f"{np.percentile(ms, 50):.1f}" if len(ms) else "-",
        "p99 ms": f"{np.percentile(ms, 99):.1f}" if len(ms) else "-",
        "max ms": f"{ms.max():.0f}" if len(ms) else "-",
        "error kinds": ",".join(sorted(set(errors))) or "-",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default="KTH-SP2-1996-2.1-cln")
    parser.add_argument("--clients", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-site", action="store_true", help="the trace run only")
    parser.add_argument(
        "--warm-rows",
        action="store_true",
        help="run warm_predictions first (every past instant answers warm in every worker)",
    )
    parser.add_argument("--method", help="a wait method to ask for instead of the default")
    parser.add_argument("--instants", type=int, default=0, help="draw `at` from this many")
    parser.add_argument(
        "--reuse",
        help="the folder of an earlier run: its database and fitted files (no ingest, no fit)",
    )
    args = parser.parse_args()
    tmp = Path(args.reuse) if args.reuse else Path(tempfile.mkdtemp(prefix="bench_server_load_"))
    old_layout = args.reuse and not (tmp / "fitted").is_dir()  # before QUEUECAST_FITTED_DIR
    fitted = tmp / "uploads" / "fitted" if old_layout else tmp / "fitted"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    port = free_port()
    env.update(
        QUEUECAST_SQLITE_PATH=str(tmp / "bench.sqlite3"),
        QUEUECAST_SECRET_KEY_FILE=str(tmp / "secret"),
        QUEUECAST_UPLOAD_DIR=str(tmp / "uploads"),
        QUEUECAST_FITTED_DIR=str(fitted),
        QUEUECAST_BIND=f"127.0.0.1:{port}",
        QUEUECAST_WEB_WORKERS=str(args.workers),
        QUEUECAST_WEB_THREADS=str(args.threads),
        QUEUECAST_ACCESS_LOG="/dev/null",
        BENCH_TRACE=str(traces_dir() / f"{args.trace}.swf.gz"),
        BENCH_SITE="0" if args.no_site else "1",
        BENCH_WARM="1" if args.warm_rows else "0",
    )
    setup = subprocess.run(
        [sys.executable, "-c", "import json\n" + (REUSE if args.reuse else SETUP)],
        cwd=ROOT, env=env,
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    info = json.loads(setup.stdout.strip().splitlines()[-1])
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--config", "queuecast/gunicorn_conf.py",
         "queuecast.wsgi"], cwd=ROOT, env=env, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    runs = [
        (
            f"/api/traces/{info['id']}/predictions/wait",
            bodies(info, 5000, args.seed, args.method, args.instants),
        )
    ]
    if info["site"] is not None:
        runs.append((f"/api/sites/{info['site']}/predict/", site_bodies(info, 5000, args.seed)))
    rows, warm = [], 0.0
    try:
        wait_for(port)
        for path, payloads in runs:
            warm += warm_up(port, path, info["token"], payloads, args.workers * args.threads)
            rows += [load(port, path, info["token"], payloads, n, args.seconds)
                     for n in args.clients]  # fmt: skip
    finally:
        server.terminate()
        server.wait(30)
    print(
        f"gunicorn {args.workers} workers x {args.threads} threads, trace {args.trace}, "
        f"warm-up {warm:.1f} s (one fit per trace or site, shared by the workers)"
    )
    print(table(rows, list(rows[0])))


def wait_for(port: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    sys.exit("gunicorn did not start")


def warm_up(port: int, path: str, token: str, payloads: list[bytes], n: int) -> float:
    """Wait while the model is being fitted (503 "being fitted": a request never fits), then
    load until a 3-second round has no request over 1 s (every worker has loaded it)."""
    started = time.perf_counter()
    for _ in range(600):
        row = load(port, path, token, payloads, n, 3.0)
        kinds = set(row["error kinds"].split(",")) - {"-"}
        if kinds - {"503", "TimeoutError"}:
            sys.exit(f"errors while warming up: {row}")
        if kinds:  # the model is not stored yet, or a first request at an instant is slow
            print(f"warm-up: {sorted(kinds)} after {time.perf_counter() - started:.0f} s",
                  flush=True)  # fmt: skip
            time.sleep(10)
            continue
        if row["requests"] and float(row["max ms"]) < 1000:
            break
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
