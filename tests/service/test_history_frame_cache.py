"""A site's history frame is read once per state of the history (rows are only ever added):
a live prediction no longer reads every history row at every request (issue 18)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from holdqueue.models import SiteHistory
from holdqueue.services import history
from tests.service.test_sites_support import simulated_site

pytestmark = pytest.mark.django_db


def test_the_frame_is_read_once_and_again_when_a_job_finished():
    site = simulated_site()
    first = history.history_frame(site)
    assert len(first) == SiteHistory.objects.filter(site=site).count() > 0
    with CaptureQueriesContext(connection) as queries:
        again = history.history_frame(site)
    assert len(queries) == 1  # the stamp only, not the rows
    assert again.equals(first) and again is not first  # a copy: callers may change it
    again.loc[0, "run_time"] = -5.0
    assert history.history_frame(site).loc[0, "run_time"] != -5.0
    SiteHistory.objects.create(site=site, job_key="late-1", user="u", submit_s=-1.0,
                               wait_s=3.0, run_s=7.0, procs=2, req_time_s=60.0)  # fmt: skip
    grown = history.history_frame(site)
    assert len(grown) == len(first) + 1
    assert grown.equals(history._read_frame(site))  # what a fresh read gives


def test_the_kept_frame_is_one_block_per_dtype_so_each_copy_is_one_pass():
    site = simulated_site()
    frame = history.history_frame(site)
    assert frame._mgr.nblocks == frame.dtypes.nunique()  # 18 one-column blocks before
    assert frame.equals(history._read_frame(site))
    assert list(frame.dtypes) == list(history._read_frame(site).dtypes)


def test_a_live_snapshot_copies_the_history_only_when_it_is_read():
    from holdqueue.services import backends
    from holdqueue.services.snapshot import snapshot_now

    site = simulated_site()
    with CaptureQueriesContext(connection) as asked:
        snap, _ = snapshot_now(site, backends.now())
    assert not [q for q in asked.captured_queries if "sitehistory" in q["sql"]]
    assert callable(snap.__dict__["_history"])  # a prediction never reads it: no copy
    frame = snap.history
    assert not callable(snap.__dict__["_history"]) and snap.history is frame  # copied once
    assert frame.equals(history._read_frame(site))
    frame.loc[0, "run_time"] = -5.0  # the copy is the snapshot's own
    assert history.history_frame(site).loc[0, "run_time"] != -5.0
