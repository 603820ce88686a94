"""One bad site or row never stops the others; a site whose trace is gone is broken, not a
503 for everyone; site settings are checked by range; staff delete sites; traces a site uses
cannot be deleted."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from holdqueue.models import Site, SiteJob
from holdqueue.services import backends as bk
from holdqueue.services.sweep import sweep
from tests.service.test_sites_support import api_for, held, job_body, simulated_site

pytestmark = pytest.mark.django_db


# --- one bad site or row ---------------------------------------------------------------------
def test_a_site_whose_backend_raises_stops_neither_the_other_sites_nor_the_sync(alice, monkeypatch):
    good, bad = simulated_site("good"), simulated_site("bad")
    real = bk.backend_for

    def flaky(site):
        if site.name == "bad":
            raise OverflowError("cannot convert float infinity to integer")
        return real(site)

    monkeypatch.setattr(bk, "backend_for", flaky)
    jobs = [held(bad, alice), held(good, alice)]
    result = sweep()
    assert result["released"] >= 1 and result["errors"] >= 2
    stuck, sent = (SiteJob.objects.get(pk=j.pk) for j in jobs)
    assert stuck.state == "submitting" and "infinity" in stuck.error  # looked up after the lease
    assert sent.state in SiteJob.IN_BATCH  # submitted, then synced
    good.refresh_from_db(), bad.refresh_from_db()
    assert good.synced_until is not None and good.error_count == 0
    assert bad.error_count == 1 and "infinity" in bad.last_error
    sweep()
    bad.refresh_from_db()
    assert bad.error_count == 2  # counted, and tried again at every pass


def test_a_simulated_site_whose_trace_is_gone_is_broken_and_fails_its_held_jobs(
    alice, staff_api, monkeypatch
):
    site, other = simulated_site("lost"), simulated_site("fine")
    jobs = [held(site, alice), held(other, alice)]
    Site.objects.filter(pk=site.pk).update(trace=None)  # the state older data can be in
    result = sweep()
    site.refresh_from_db()
    assert result["broken_sites"] == 1 and "trace was deleted" in site.broken
    first, second = (SiteJob.objects.get(pk=j.pk) for j in jobs)
    assert first.state == "failed" and "is broken" in first.error
    assert second.state in SiteJob.IN_BATCH
    refused = api_for(alice).post(f"/api/sites/{site.pk}/jobs/", job_body(), format="json")
    assert refused.status_code == 409 and "cannot take jobs" in refused.data["detail"]
    assert staff_api.get(f"/api/sites/{site.pk}/").status_code == 503
    listed = {s["name"]: s["broken"] for s in staff_api.get("/api/sites/").data["results"]}
    assert listed == {"fine": "", "lost": site.broken}


def test_users_cannot_delete_a_trace_a_site_replays(alice) -> None:
    site = simulated_site()
    trace = site.trace
    trace.owner = alice
    trace.save()
    response = api_for(alice).delete(f"/api/traces/{trace.pk}/")
    assert response.status_code == 409 and f"site {site.name}" in response.data["detail"]
    browser = Client()
    browser.force_login(alice)
    page = browser.post(f"/traces/{trace.pk}/delete/", follow=True)
    assert page.status_code == 200 and "was not deleted" in page.content.decode()
    site.refresh_from_db()
    assert site.trace_id == trace.pk


# --- site settings by range ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("backend", "config", "key"),
    [
        ("slurm", {"timeout_s": -5}, "timeout_s"),
        ("slurm", {"timeout_s": 0}, "timeout_s"),
        ("slurm", {"timeout_s": 1e308}, "timeout_s"),
        ("slurm", {"timeout_s": 31}, "timeout_s"),  # above half the 60 s submit lease
        ("slurm", {"accounting": "evil"}, "accounting"),
        ("slurm", {"slurm_conf": "slurm.conf"}, "slurm_conf"),
        ("slurm", {"export_env": ["DATABASE_URL"]}, "export_env"),
        ("slurm", {"export_env": ["QUEUECAST_SECRET_KEY"]}, "export_env"),
        ("slurm", {"allowed_directives": ["--array"]}, "allowed_directives"),
        ("slurm", {"submit_as_owner": "maybe"}, "submit_as_owner"),
        ("simulated", {"speed": 1e308}, "speed"),
        ("simulated", {"speed": 0}, "speed"),
        ("simulated", {"runtime_fraction": -3}, "runtime_fraction"),
        ("simulated", {"runtime_fraction": 2}, "runtime_fraction"),
    ],
)
def test_site_settings_out_of_range_are_refused_naming_the_key(staff_api, backend, config, key):
    site = simulated_site()
    body = {"name": "x", "backend": backend, "machine_procs": 8, "config": config}
    if backend == "simulated":
        body["trace"] = site.trace_id
    response = staff_api.post("/api/sites/", body, format="json")
    assert response.status_code == 400, response.data
    assert key in str(response.data["config"])
    assert not Site.objects.filter(name="x").exists()


def test_good_site_settings_are_kept(staff_api) -> None:
    config = {
        "timeout_s": 20,
        "accounting": "sacct",
        "workdir": "/scratch/queuecast",
        "export_env": ["OMP_NUM_THREADS"],
        "allowed_directives": ["--mail-type", "-o"],
        "submit_as_owner": True,
    }
    body = {"name": "ok", "backend": "slurm", "machine_procs": 8, "config": config}
    response = staff_api.post("/api/sites/", body, format="json")
    assert response.status_code == 201, response.data
    assert Site.objects.get(name="ok").config == {**config, "timeout_s": 20.0}


def test_a_stored_timeout_over_the_limit_is_capped_below_the_lease(settings) -> None:
    site = Site.objects.create(
        name="old", backend="slurm", machine_procs=8, config={"timeout_s": 1e308},
        epoch=timezone.now(),
    )  # fmt: skip
    settings.QUEUECAST_SUBMIT_LEASE_S = 60
    assert bk.backend_for(site).timeout_s == 30.0


# --- staff delete sites ------------------------------------------------------------------
def test_staff_delete_a_site_users_cannot_and_live_jobs_need_force(staff_api, alice) -> None:
    site = simulated_site()
    job = held(site, alice, release_at=timezone.now() + timezone.timedelta(hours=1))
    assert api_for(alice).delete(f"/api/sites/{site.pk}/").status_code == 403
    busy = staff_api.delete(f"/api/sites/{site.pk}/")
    assert busy.status_code == 409 and "1 held" in busy.data["detail"]
    assert staff_api.delete(f"/api/sites/{site.pk}/?force=true").status_code == 204
    assert not Site.objects.filter(pk=site.pk).exists()
    assert not SiteJob.objects.filter(pk=job.pk).exists()
    assert simulated_site("again").trace_id  # the trace is free again
