"""CPU per warm API prediction in one process (Django test client), and the answers' bytes.

    python benchmarks/bench_request_cpu.py --dir DIR [--target trace|site] [--requests 400]
        [--warm 64] [--seed 1] [--profile FILE] [--save F.pkl | --check F.pkl] [--code-tag T]

``DIR`` is a folder set up by ``bench_server_load.py --dir DIR --setup-only`` (KTH by
default: the trace ingested, its bundle fitted and trained ahead, the recent-error pools of
its 16 past instants and the site's bundle stored). Everything is read from there, so every
run serves the same stored files.

- ``trace``: ``POST /api/traces/{id}/predictions/wait`` at the setup's past instants with
  random users and sizes (the bodies of ``bench_server_load``); ``--warm`` requests (seed 0)
  first, so each instant has been asked once, then ``--requests`` measured ones (``--seed``).
- ``site``: ``POST /api/sites/{id}/predict/`` at "now" on the simulated site; the site clock
  is pinned (``holdqueue.services.backends.now`` and the simulated cluster's clock answer one
  instant: the site's creation time plus one hour) so every run and every process asks
  about the same state, and the bodies can be compared.

The store's files are named by a digest of the code (``fitted_store.code_tag``), so a
checkout with other code would fit everything again; ``--code-tag`` (the setup's tag, the
``~<tag>`` of its file names) serves the setup's files instead, so that before and after
serve the same fitted bundles.

Prints the CPU (``os.times()`` user + system) per measured request, its wall p50 / p99, and
with ``--profile`` the top of cProfile over the measured requests. ``--save`` keeps every
measured answer's body; ``--check`` compares them byte for byte with a saved run's first
``--requests`` (the bodies of a seed are the same for any count).
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
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
ap.add_argument("--target", choices=("trace", "site"), default="trace")
ap.add_argument("--requests", type=int, default=400)
ap.add_argument("--warm", type=int, default=64)
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--profile")
ap.add_argument("--top", type=int, default=40)
ap.add_argument("--save")
ap.add_argument("--check")
ap.add_argument(
    "--code-tag",
    help="serve the store's files of this code tag (the setup's) whatever the checkout's: "
    "valid only while the change leaves the pickled classes as they were",
)
ARGS = ap.parse_args()
DIR = Path(ARGS.dir).resolve()
os.environ["QUEUECAST_SQLITE_PATH"] = str(DIR / "bench.sqlite3")
os.environ["QUEUECAST_UPLOAD_DIR"] = str(DIR / "uploads")
os.environ["QUEUECAST_FITTED_DIR"] = str(DIR / "fitted")
os.environ["QUEUECAST_SECRET_KEY_FILE"] = str(DIR / "secret")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "queuecast.settings")
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import django  # noqa: E402

django.setup()

from bench_server_load import bodies, site_bodies  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from rest_framework.test import APIClient  # noqa: E402


def cpu() -> float:
    t = os.times()
    return t.user + t.system


def pin_site_clock(site_pk: int) -> None:
    """Every "now" of the site is one instant (an hour after the site was created)."""
    from holdqueue.models import Site
    from holdqueue.services import backends

    fixed = Site.objects.get(pk=site_pk).created_at + dt.timedelta(hours=1)
    backends.now = lambda: fixed
    make = backends.make_backend  # the simulated cluster's own clock too

    def pinned(kind: str, **options):
        if kind == "simulated":
            options["clock"] = fixed.timestamp
        return make(kind, **options)

    backends.make_backend = pinned


def main() -> None:
    if ARGS.code_tag:
        from predictor.services import fitted_store

        fitted_store.code_tag.cache_clear()
        fitted_store.code_tag = lambda: ARGS.code_tag
    info = json.loads((DIR / "bench_info.json").read_text())
    client = APIClient()
    client.force_authenticate(get_user_model().objects.get(username="bench"))
    if ARGS.target == "trace":
        url = f"/api/traces/{info['id']}/predictions/wait"
        warm = bodies(info, ARGS.warm, 0)
        measured = bodies(info, ARGS.requests, ARGS.seed)
    else:
        pin_site_clock(info["site"])
        url = f"/api/sites/{info['site']}/predict/"
        warm = site_bodies(info, ARGS.warm, 0)
        measured = site_bodies(info, ARGS.requests, ARGS.seed)

    def post(body: bytes):
        res = client.post(url, body, content_type="application/json")
        assert res.status_code == 200, res.content
        return res.content

    c0 = cpu()
    for body in warm:
        post(body)
    warm_cpu = cpu() - c0
    profile = cProfile.Profile() if ARGS.profile else None
    walls, answers = [], []
    c0 = cpu()
    if profile is not None:
        profile.enable()
    for body in measured:
        w0 = time.perf_counter()
        answers.append(post(body))
        walls.append(time.perf_counter() - w0)
    if profile is not None:
        profile.disable()
    used = cpu() - c0
    ms = np.array(walls) * 1000
    print(f"{ARGS.target}: warm-up {len(warm)} requests {warm_cpu:.1f} CPU-s; measured "
          f"{len(measured)} requests: {1000 * used / len(measured):.2f} CPU-ms/request, wall "
          f"p50 {np.percentile(ms, 50):.2f} ms p99 {np.percentile(ms, 99):.2f} ms"
          f"{' (under cProfile)' if profile else ''}")  # fmt: skip
    if profile is not None:
        profile.dump_stats(ARGS.profile)
        pstats.Stats(ARGS.profile).sort_stats("cumulative").print_stats(ARGS.top)
        pstats.Stats(ARGS.profile).sort_stats("tottime").print_stats(ARGS.top)
    if ARGS.save:
        Path(ARGS.save).write_bytes(pickle.dumps(answers))
    if ARGS.check:
        ref = pickle.loads(Path(ARGS.check).read_bytes())
        if len(ref) < len(answers):
            sys.exit(f"{ARGS.check} holds {len(ref)} answers, fewer than {len(answers)}")
        differ = sum(a != b for a, b in zip(answers, ref, strict=False))
        print(f"check against {ARGS.check}: {len(answers)} API bodies, {differ} differ (bytes)")


if __name__ == "__main__":
    main()
