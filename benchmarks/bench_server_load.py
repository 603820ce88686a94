"""Load on the production server: wait predictions from 8 and 32 concurrent clients, on a
stored trace at past instants and on a live (simulated) site at "now".

    python benchmarks/bench_server_load.py [--trace KTH-SP2-1996-2.1-cln] [--clients 8 32]
        [--seconds 20] [--workers 2] [--threads 4] [--no-site] [--instants 16]
        [--warm instants|all|none] [--floor] [--dir DIR --setup-only | --reuse DIR]

Setup (niced, reported apart as warming): a SQLite database in DIR, the shared trace
ingested, a simulated site replaying it (its history copied from the trace), then unless
``--warm none`` the trace's bundle fitted and trained ahead (no request trains a model),
the recent-error pools of ``--instants`` past instants (rows evenly spread from 600 rows
after the tuning part to the end, so each pool lies after it; ``--warm all``: every row's
prediction) and the site's bundle, all stored for every process. ``--setup-only`` stops
there; ``--reuse DIR`` serves that folder (no ingest, no fit). Then gunicorn
(``queuecast/gunicorn_conf.py``, the command of ``scripts/serve``) on a free loopback port,
a warm-up (each worker loads the stored files; it waits through 503 "being fitted"), and
closed-loop clients (one thread and one keep-alive connection each) posting
``/api/traces/{id}/predictions/wait`` at the setup's instants with random users and sizes
for ``--seconds``; then (unless ``--no-site``) the same against
``/api/sites/{id}/predict/``: every request asks about "now", the live queue read from the
database. Prints requests/s, p50/p99/max latency and the error count per target and client
count, the workers' CPU per request, the clients' own CPU per request (this process: the
load is not the clients' doing) and the range of the clients' mean latencies (a wide range:
the kept-alive connections are spread unevenly over the workers). Goals (issues 11 and 18):
p99 < 100 ms and >= 200 req/s at 32 clients, 0 errors. ``--floor`` then loads the trace's
detail GET the same way: no answer on this server and machine can be cheaper than that.
"""

from __future__ import annotations

import argparse
import atexit
import http.client
import json
import os
import shutil
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
import os, time, django
os.environ["DJANGO_SETTINGS_MODULE"] = "queuecast.settings"
django.setup()
from django.core.management import call_command
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from traces.services import ingest_swf
def cpu():
    t = os.times()
    return t.user + t.system
timing = {}
c0 = cpu()
call_command("migrate", verbosity=0)
user = get_user_model().objects.create_user("bench")
trace = ingest_swf(os.environ["BENCH_TRACE"], name="bench", owner=user)
users = sorted(set(trace.jobs.values_list("user_id", flat=True)))
queues = sorted(set(trace.jobs.values_list("queue_id", flat=True)))
site = None
if os.environ.get("BENCH_SITE") == "1":
    from holdqueue.services.sites import create_site
    site = create_site({"name": "bench-site", "backend": "simulated", "partition": "",
                        "trace": trace, "config": {"speed": 1.0}, "warm_up": True}, user).pk
timing["ingest and site CPU-s"] = round(cpu() - c0, 1)
from predictor.core.bundle import TUNE_FRACTION
from traces.services import swf_trace_for
submit = swf_trace_for(trace).jobs["submit_time"].to_numpy(float)
n_tune = int(TUNE_FRACTION * submit.size)
n_inst = int(os.environ["BENCH_INSTANTS"])
# Instants whose recent-error pool (the last 300 started jobs) lies after the tuning part.
rows = np.linspace(min(n_tune + 600, submit.size - 1), submit.size - 1, n_inst).round()
instants = [min(float(submit[int(r)]) + 0.5, float(submit[-1])) for r in rows]
if os.environ.get("BENCH_WARM") != "0":
    from predictor.services.predict import bundle_for, predict_wait
    from predictor.services.warm import warm_rows
    c0 = cpu()
    bundle_for(trace, block=True)  # fitted and trained ahead, stored for the workers
    timing["trace fit CPU-s"] = round(cpu() - c0, 1)
    c0 = cpu()
    for at in instants:  # each instant's recent-error pool, stored for the workers
        predict_wait(trace, {"user_id": users[0], "requested_procs": 1, "at": at,
                             "queue_id": queues[0]})
    timing["instant pools CPU-s"] = round(cpu() - c0, 1)
    if os.environ.get("BENCH_WARM") == "all":
        c0 = cpu()
        warm_rows(trace)  # every row's prediction: every past instant warm
        timing["all rows CPU-s"] = round(cpu() - c0, 1)
    if site is not None:
        from holdqueue.models import Site
        from holdqueue.services.predict import warm_site
        c0 = cpu()
        warm_site(Site.objects.get(pk=site))
        timing["site fit CPU-s"] = round(cpu() - c0, 1)
print(json.dumps({"id": trace.pk, "site": site, "token": Token.objects.create(user=user).key,
                  "users": users, "lo": trace.first_submit_s, "hi": trace.last_submit_s,
                  "procs": trace.machine_procs, "instants": instants, "queues": queues,
                  "timing": timing}))
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def bodies(info: dict, n: int, seed: int, method: str | None = None) -> list[bytes]:
    """Random queries at the setup's instants (their recent-error pools stored by the
    setup), random users and sizes; ``method`` asks for that method."""
    rng = np.random.default_rng(seed)
    queues = info.get("queues") or [-1]
    return [
        json.dumps(
            {
                "user_id": int(rng.choice(info["users"])),
                "group_id": -1,
                # a log of several queues has no default: one of its queues (one queue: the
                # same draws as before, so a saved run's bodies are unchanged)
                "queue_id": int(rng.choice(queues)) if len(queues) > 1 else -1,
                "requested_procs": int(rng.integers(1, info["procs"] + 1)),
                "requested_time": float(rng.integers(60, 86400)),
                "at": float(rng.choice(info["instants"])),
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
                if body:
                    conn.request("POST", self.path, body=body, headers=self.headers)
                else:  # the floor: the trace's detail, as cheap as an authenticated GET gets
                    conn.request("GET", self.path, headers=self.headers)
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


def workers_cpu_s(master: int) -> float:
    """User + system CPU seconds of the gunicorn master's worker processes (Linux /proc)."""
    total = 0.0
    try:
        children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
        for pid in children:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return float("nan")
    return total


def load(
    port: int,
    path: str,
    token: str,
    payloads: list[bytes],
    n: int,
    seconds: float,
    master: int | None = None,
) -> dict:
    stop = threading.Event()
    cpu0 = workers_cpu_s(master) if master else float("nan")
    client0 = time.process_time()
    clients = [Client(port, path, token, payloads[k::n], stop) for k in range(n)]
    started = time.perf_counter()
    for client in clients:
        client.start()
    time.sleep(seconds)
    stop.set()
    for client in clients:
        client.join()
    elapsed = time.perf_counter() - started
    cpu = workers_cpu_s(master) - cpu0 if master else float("nan")
    client_cpu = time.process_time() - client0
    means = [1000 * float(np.mean(c.latencies)) for c in clients if c.latencies]
    ms = np.array([t for c in clients for t in c.latencies]) * 1000
    errors = [e for c in clients for e in c.errors]
    target = "trace past" if any(payloads) else "trace detail GET"
    return {
        "target": "site now" if "/sites/" in path else target,
        "clients": n,
        "requests": len(ms),
        "errors": len(errors),
        "req/s": f"{len(ms) / elapsed:.0f}",
        "p50 ms": f"{np.percentile(ms, 50):.1f}" if len(ms) else "-",
        "p99 ms": f"{np.percentile(ms, 99):.1f}" if len(ms) else "-",
        "max ms": f"{ms.max():.0f}" if len(ms) else "-",
        "workers CPU ms/req": f"{1000 * cpu / max(len(ms), 1):.1f}" if master else "-",
        "clients CPU ms/req": f"{1000 * client_cpu / max(len(ms), 1):.2f}",
        "client means ms": f"{min(means):.0f}-{max(means):.0f}" if means else "-",
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
        "--warm",
        choices=("instants", "all", "none"),
        default="instants",
        help="before serving, fit and store the bundle (trained ahead) and the site's, and "
        "the recent-error pools of the --instants instants (default), or every row's ('all')",
    )
    parser.add_argument("--method", help="a wait method to ask for instead of the default")
    parser.add_argument("--instants", type=int, default=16, help="past instants asked about")
    parser.add_argument("--warm-up-limit", type=float, default=900.0, help="seconds per target")
    parser.add_argument(
        "--during-fit",
        metavar="WAIT_METHOD",
        help="then ask once with this wait method (not stored: its fit starts in the "
        "background) and load the trace again while it fits",
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="then load the trace's detail GET the same way: the floor of any answer on this "
        "server and machine (authentication, one lookup, JSON), for the goal to be read against",
    )
    parser.add_argument("--setup-only", action="store_true", help="set up DIR and stop")
    parser.add_argument("--dir", help="the folder to set up (default: a new temporary one)")
    parser.add_argument(
        "--reuse",
        help="the folder of an earlier --setup-only run: its database, fitted files and "
        "instants (no ingest, no fit)",
    )
    args = parser.parse_args()
    tmp = Path(args.reuse or args.dir or tempfile.mkdtemp(prefix="bench_server_load_"))
    if not (args.reuse or args.dir or args.setup_only):  # a temporary folder goes with the run
        atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    tmp.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    port = free_port()
    env.update(
        QUEUECAST_SQLITE_PATH=str(tmp / "bench.sqlite3"),
        QUEUECAST_SECRET_KEY_FILE=str(tmp / "secret"),
        QUEUECAST_UPLOAD_DIR=str(tmp / "uploads"),
        QUEUECAST_FITTED_DIR=str(tmp / "fitted"),
        QUEUECAST_BIND=f"127.0.0.1:{port}",
        QUEUECAST_WEB_WORKERS=str(args.workers),
        QUEUECAST_WEB_THREADS=str(args.threads),
        QUEUECAST_ACCESS_LOG="/dev/null",
        BENCH_TRACE=str(traces_dir() / f"{args.trace}.swf.gz"),
        BENCH_SITE="0" if args.no_site else "1",
        BENCH_WARM={"instants": "1", "all": "all", "none": "0"}[args.warm],
        BENCH_INSTANTS=str(args.instants),
    )
    saved = tmp / "bench_info.json"
    if args.reuse:
        info = json.loads(saved.read_text())
    else:  # niced: the setup is warming, reported apart from the load
        setup = subprocess.run(
            ["nice", "-n", "10", sys.executable, "-c", "import json\nimport numpy as np\n" + SETUP],
            cwd=ROOT, env=env, capture_output=True, text=True,
        )  # fmt: skip
        if setup.returncode:
            sys.exit(f"setup failed:\n{setup.stderr[-3000:]}")
        info = json.loads(setup.stdout.strip().splitlines()[-1])
        saved.write_text(json.dumps(info))
    print(f"folder {tmp}; {len(info['instants'])} instants; setup {info['timing']}", flush=True)
    if args.setup_only:
        return
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--config", "queuecast/gunicorn_conf.py",
         "queuecast.wsgi"], cwd=ROOT, env=env, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    runs = [
        (
            f"/api/traces/{info['id']}/predictions/wait",
            bodies(info, 5000, args.seed, args.method),
        )
    ]
    if info["site"] is not None:
        runs.append((f"/api/sites/{info['site']}/predict/", site_bodies(info, 5000, args.seed)))
    if args.floor:
        runs.append((f"/api/traces/{info['id']}/", [b""] * 64))
    rows, warm = [], 0.0
    try:
        wait_for(port)
        for path, payloads in runs:
            n = args.workers * args.threads
            warm += warm_up(port, path, info["token"], payloads, n, args.warm_up_limit)
            rows += [load(port, path, info["token"], payloads, n, args.seconds, server.pid)
                     for n in args.clients]  # fmt: skip
        if args.during_fit:
            rows.append(during_fit(port, runs[0], info, args, server.pid))
    finally:
        server.terminate()
        server.wait(30)
    print(
        f"gunicorn {args.workers} workers x {args.threads} threads, trace {args.trace}, "
        f"warm-up {warm:.1f} s (one fit per trace or site, shared by the workers)"
    )
    print(table(rows, list(rows[0])))


def during_fit(port: int, run: tuple, info: dict, args: argparse.Namespace, master: int) -> dict:
    """One request asking for ``--during-fit`` (its bundle is not stored: a background fit
    starts, in a child process), then the trace load at the smallest client count while it
    runs; the row says whether a fit was still running at the end."""
    path, payloads = run
    override = bodies(info, 1, args.seed + 1, args.during_fit)[0]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    headers = {"Authorization": f"Token {info['token']}", "Content-Type": "application/json"}
    conn.request("POST", path, body=override, headers=headers)
    status = conn.getresponse()
    status.read()
    conn.close()
    row = load(port, path, info["token"], payloads, min(args.clients), args.seconds, master)
    fitting = subprocess.run(["pgrep", "-f", "fit_model"], capture_output=True).stdout.strip()
    row["target"] = f"trace past, {args.during_fit} fitting ({status.status}, " + (
        "still fitting at the end)" if fitting else "fit over before the end)"
    )
    return row


def wait_for(port: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    sys.exit("gunicorn did not start")


def warm_up(
    port: int, path: str, token: str, payloads: list[bytes], n: int, limit_s: float = 900
) -> float:
    """Wait while the model is being fitted (503 "being fitted": a request never fits), then
    load until a 3-second round has no request over 1 s (every worker has loaded it), for
    at most ``limit_s`` (then the load runs anyway, and says so)."""
    started = time.perf_counter()
    while time.perf_counter() - started < limit_s:
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
    else:
        print(f"warm-up stopped after {limit_s:.0f} s: the load runs on what is warm", flush=True)
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
