"""Shared fixtures: the real-trace folder and small hand-made SWF files."""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from django.conf import settings

FIXTURES = Path(__file__).parent / "fixtures"


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist (scripts/test), each process gets upload and cache folders of its
    own, as it gets a test database of its own: uploads are named by row id, and the caches
    (a live site's queue, the run slots) are keyed by row id, which two databases share; on
    Redis, a key prefix of its own. The environment names the folders too, for the
    ``manage.py`` children a test starts."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return
    for name in ("QUEUECAST_UPLOAD_DIR", "QUEUECAST_CACHE_DIR"):
        folder = str(Path(getattr(settings, name)) / f"xdist-{worker}")
        setattr(settings, name, folder)
        os.environ[name] = folder
    for cache in settings.CACHES.values():
        if cache["BACKEND"].endswith("FileBasedCache"):
            name = Path(cache["LOCATION"]).name
            cache["LOCATION"] = str(Path(settings.QUEUECAST_CACHE_DIR) / name)
        elif cache["BACKEND"].endswith("RedisCache"):  # a shared Redis: keys of its own
            cache["KEY_PREFIX"] = f"{cache.get('KEY_PREFIX', '')}-{worker}"


@pytest.fixture(autouse=True)
def _one_slurm_test_at_a_time(request: pytest.FixtureRequest) -> Iterator[None]:
    """The tests marked ``slurm`` share the machine's one development Slurm: under
    pytest-xdist (scripts/test) they take a lock file in turn, so no two of them, in this
    run's processes or another run's, submit to it at once."""
    if request.node.get_closest_marker("slurm") is None:
        yield
        return
    with open(Path(tempfile.gettempdir()) / "queuecast-tests-slurm.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def traces_dir() -> Path | None:
    """The shared PWA traces folder (QUEUECAST_TRACES_DIR), or None if absent."""
    path = getattr(settings, "QUEUECAST_TRACES_DIR", None) or os.environ.get("QUEUECAST_TRACES_DIR")
    if path and Path(path).is_dir() and any(Path(path).glob("*.swf*")):
        return Path(path)
    return None


@pytest.fixture(scope="session")
def shared_traces() -> Path:
    """Skip (with the reason) when the real traces are not on this machine."""
    path = traces_dir()
    if path is None and os.environ.get("QUEUECAST_REQUIRE_TRACES") == "1":
        pytest.fail("QUEUECAST_REQUIRE_TRACES=1 but no traces in QUEUECAST_TRACES_DIR")
    if path is None:
        pytest.skip(
            "real PWA traces not found: set QUEUECAST_TRACES_DIR to a folder of .swf.gz files "
            "(CI uses ../shared/traces)"
        )
    return path


def trace_file(folder: Path, name: str) -> Path:
    """``folder / name``, or skip the test (saying which file) when the folder lacks it."""
    path = folder / name
    if not path.exists():
        pytest.skip(f"{name} not in {folder}")
    return path


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


def synthetic_log(n: int = 400, seed: int = 0, queues: int = 2) -> pd.DataFrame:
    """A small SWF log sorted by submit: bursts of same-second arrivals, several users and
    queues, some jobs with unknown waits or that never ran, waits growing with the size."""
    rng = np.random.default_rng(seed)
    submit = np.cumsum(rng.exponential(200.0, n) * (rng.uniform(size=n) > 0.15)).round()
    procs = rng.choice([1, 2, 4, 8, 32, 64], n)
    wait = (rng.exponential(150.0, n) * (1 + procs / 8)).round() * (rng.uniform(size=n) > 0.2)
    run = rng.exponential(1500.0, n).round() + 1
    wait[rng.uniform(size=n) < 0.02] = -1.0
    run[rng.uniform(size=n) < 0.02] = -1.0
    return swf_frame(
        submit_time=submit,
        wait_time=wait,
        run_time=run,
        allocated_procs=procs,
        requested_procs=procs,
        requested_time=np.where(rng.uniform(size=n) < 0.05, -1.0, (run * 2).round()),
        user_id=rng.integers(1, 7, n),
        group_id=rng.integers(1, 3, n),
        executable_id=rng.integers(1, 4, n),
        queue_id=rng.integers(0, queues, n),
    )


def swf_frame(**columns: np.ndarray) -> pd.DataFrame:
    """An SWF frame of ``columns`` (the other fields -1; ids 1..n; status 1), times as floats."""
    from traces.core.swf import SWF_FIELDS

    n = len(columns["submit_time"])
    cols = {f: np.full(n, -1, dtype=np.int64) for f in SWF_FIELDS}
    cols.update(job_id=np.arange(1, n + 1), status=np.ones(n, dtype=np.int64), **columns)
    frame = pd.DataFrame(cols)[list(SWF_FIELDS)]
    for f in ("submit_time", "wait_time", "run_time", "requested_time"):
        frame[f] = frame[f].astype(float)
    return frame


@pytest.fixture
def small_log() -> pd.DataFrame:
    """400 jobs, 2 queues, 6 users, same-second bursts, a few unknown waits and runtimes."""
    return synthetic_log()


# --- users and clients (service tier: the test needs the database) -------------------------
@pytest.fixture
def alice():
    """A plain user (no password: hashing one costs half a second)."""
    from tests.service.traces_support import make_user

    return make_user("alice")


@pytest.fixture
def bob():
    """A second plain user, who must not see alice's rows."""
    from tests.service.traces_support import make_user

    return make_user("bob")


@pytest.fixture
def staff_user():
    from tests.service.traces_support import make_user

    return make_user("root", staff=True)


@pytest.fixture
def staff_api(staff_user):
    """DRF client authenticated as the staff user."""
    from tests.service.traces_support import api_for

    return api_for(staff_user)


@pytest.fixture
def alice_token_api(alice):
    """DRF client that sends alice's token (``Authorization: Token ...``), as a script would."""
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=alice).key}")
    return client


@pytest.fixture
def browser(alice):
    """Django test client logged in as alice (the pages)."""
    from django.test import Client

    client = Client()
    client.force_login(alice)
    return client


@pytest.fixture(autouse=True)
def _private_fitted_store(settings, tmp_path_factory) -> None:
    """Each test's fitted bundles go to a folder of its own (``predictor.services.fitted_store``),
    so no test answers from a bundle another test, or an earlier run, left in the upload folder."""
    settings.QUEUECAST_FITTED_DIR = str(tmp_path_factory.mktemp("fitted"))
