"""A simulated site replays its own trace, even when a deleted trace's id was given again.

SQLite hands out the id of a deleted last row again; the background load was cached by trace
id alone, so a new site on the new trace replayed the old trace's jobs (found when a test on
one site's backend ran after another test's site with the same trace id).
"""

from __future__ import annotations

import pytest

from holdqueue.services import backends as bk
from holdqueue.services.sites import create_site
from traces.models import Job, Trace
from traces.services.ingest import ingest_swf

pytestmark = pytest.mark.django_db

ONE_JOB = "; MaxProcs: 16\n1 0 0 100 4 -1 -1 4 100 -1 1 1 -1 -1 -1 -1 -1 -1\n"
THREE_JOBS = (
    "; MaxProcs: 16\n"
    "1 0 0 100 4 -1 -1 4 100 -1 1 1 -1 -1 -1 -1 -1 -1\n"
    "2 50 0 200 8 -1 -1 8 300 -1 1 2 -1 -1 -1 -1 -1 -1\n"
    "3 90 0 300 2 -1 -1 2 400 -1 1 3 -1 -1 -1 -1 -1 -1\n"
)


def simulated_site(trace: Trace, name: str):
    return create_site(
        {"name": name, "backend": "simulated", "trace": trace, "machine_procs": 16,
         "warm_up": False},
        None,
    )  # fmt: skip


def test_a_site_on_a_trace_that_took_a_deleted_traces_id_replays_the_new_trace(tmp_path):
    (tmp_path / "a.swf").write_text(ONE_JOB)
    (tmp_path / "b.swf").write_text(THREE_JOBS)
    old = ingest_swf(tmp_path / "a.swf", name="old")
    site = simulated_site(old, "on-old")
    assert len(bk.backend_for(site).background.submit_s) == 1
    old_id = old.pk
    site.delete()
    old.delete()

    new = ingest_swf(tmp_path / "b.swf", name="new")
    if new.pk != old_id:  # PostgreSQL never gives an id again: give it as SQLite would
        Job.objects.filter(trace_id=new.pk).update(trace_id=old_id)
        Trace.objects.filter(pk=new.pk).update(id=old_id)
        new = Trace.objects.get(pk=old_id)
    site = simulated_site(new, "on-new")
    assert site.trace_id == old_id
    assert len(bk.backend_for(site).background.submit_s) == 3
