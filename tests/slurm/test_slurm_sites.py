"""Live sites against the real dev Slurm (scripts/slurm-dev): jobs submitted with and without
molding, held and released with the chosen size, cancelled held and submitted, retried with an
Idempotency-Key, reconciled after a crash, and a controller that does not answer."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from django.utils import timezone

from holdqueue.core.backends.base import JobSpec
from holdqueue.models import SiteHistory, SiteJob
from holdqueue.services import backends as bk
from holdqueue.services.sites import create_site
from holdqueue.services.sweep import reconcile_submitting, release_due, sync_site
from tests.service.test_sites_support import FakePredictor, api_for, held, job_body, make_user
from tests.slurm.conftest import slurm_jobs_tagged, squeue

pytestmark = [pytest.mark.slurm, pytest.mark.django_db]


def post(client, site, name, headers=None, **extra):
    body = job_body(name=name, command="sleep 30", time_limit_s=120, **extra)
    return client.post(f"/api/sites/{site.pk}/jobs/", body, format="json", headers=headers or {})


def running_background(client, site, conf, name) -> None:
    """A running job, so the delay rule has a predicted completion to wait for."""
    tag = post(client, site, name, procs=64, mold=False, allow_delay=False).data["tag"]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if [j["job_state"] for j in slurm_jobs_tagged(conf, tag)] == ["RUNNING"]:
            return
        time.sleep(0.3)
    raise AssertionError(f"the background job never ran: {slurm_jobs_tagged(conf, tag)}")


def test_submit_without_molding_reaches_slurm_tagged(slurm_site, slurm_conf, job_name) -> None:
    response = post(
        api_for(make_user("alice")), slurm_site, job_name, mold=False, allow_delay=False
    )
    assert response.status_code == 201, response.data
    job = response.data
    assert job["state"] == "submitted" and job["backend_job_id"]
    (slurm,) = slurm_jobs_tagged(slurm_conf, job["tag"])
    assert str(slurm["job_id"]) == job["backend_job_id"]
    assert (slurm["cpus"], slurm["name"], slurm["time_limit"]) == (8, job_name, 2)


def test_submit_with_molding_sends_the_chosen_size(slurm_site, slurm_conf, job_name, monkeypatch):
    FakePredictor(wait_per_proc=300.0).install(monkeypatch)
    response = post(
        api_for(make_user("alice")),
        slurm_site,
        job_name,
        procs=16,
        candidates=[4],
        allow_delay=False,
    )
    job = response.data
    assert (job["state"], job["procs_requested"], job["procs_chosen"]) == ("submitted", 16, 4)
    (slurm,) = slurm_jobs_tagged(slurm_conf, job["tag"])
    assert slurm["cpus"] == 4


def test_held_job_is_released_into_slurm_with_the_chosen_size(
    slurm_site, slurm_conf, job_name, monkeypatch
) -> None:
    client = api_for(make_user("alice"))
    running_background(client, slurm_site, slurm_conf, job_name)
    # Waits grow with size enough that 4 processors win even with their longer (scaled) run.
    FakePredictor(now_wait_s=50_000.0, future_wait_s=0.0, wait_per_proc=1000.0).install(monkeypatch)
    response = post(client, slurm_site, job_name, procs=16, candidates=[4])
    job = response.data
    assert job["state"] == "held", job["decision"]
    assert job["procs_chosen"] == 4 and slurm_jobs_tagged(slurm_conf, job["tag"]) == []
    SiteJob.objects.filter(pk=job["id"]).update(release_at=timezone.now())
    assert release_due() == 1 and release_due() == 0
    row = SiteJob.objects.get(pk=job["id"])
    (slurm,) = slurm_jobs_tagged(slurm_conf, row.tag)
    assert (row.state, str(slurm["job_id"]), slurm["cpus"]) == ("submitted", row.backend_job_id, 4)


def test_cancel_while_held_never_reaches_slurm(slurm_site, slurm_conf, job_name, monkeypatch):
    client = api_for(make_user("alice"))
    running_background(client, slurm_site, slurm_conf, job_name)
    FakePredictor(now_wait_s=50_000.0).install(monkeypatch)
    job = post(client, slurm_site, job_name).data
    assert job["state"] == "held"
    assert client.post(f"/api/sites/{slurm_site.pk}/jobs/{job['id']}/cancel/").data["state"] == (
        "cancelled"
    )
    SiteJob.objects.filter(pk=job["id"]).update(release_at=timezone.now())
    assert release_due() == 0 and slurm_jobs_tagged(slurm_conf, job["tag"]) == []


def test_cancel_after_submission_scancels(slurm_site, slurm_conf, job_name) -> None:
    client = api_for(make_user("alice"))
    job = post(client, slurm_site, job_name, mold=False, allow_delay=False).data
    done = client.post(f"/api/sites/{slurm_site.pk}/jobs/{job['id']}/cancel/")
    assert done.status_code == 200 and done.data["state"] == "cancelled"
    (slurm,) = slurm_jobs_tagged(slurm_conf, job["tag"])
    assert slurm["job_state"] in ("CANCELLED", "COMPLETING")


def test_idempotent_retry_submits_once(slurm_site, slurm_conf, job_name) -> None:
    client = api_for(make_user("alice"))
    key = {"Idempotency-Key": f"retry-{job_name}"}
    first = post(client, slurm_site, job_name, key, mold=False, allow_delay=False)
    again = post(client, slurm_site, job_name, key, mold=False, allow_delay=False)
    assert first.data["id"] == again.data["id"]
    assert len(slurm_jobs_tagged(slurm_conf, first.data["tag"])) == 1


def test_a_crash_between_sbatch_and_the_record_is_reconciled_not_resubmitted(
    slurm_site, slurm_conf, job_name, settings
) -> None:
    owner = make_user("alice")
    job = held(
        slurm_site,
        owner,
        name=job_name,
        script="#!/bin/sh\nsleep 30\n",
        time_limit_s=120,
        state=SiteJob.SUBMITTING,
    )
    # sbatch accepted the job, then Queuecast died before writing the id down.
    backend_id = bk.backend_for(slurm_site).submit(
        JobSpec(tag=job.tag, name=job_name, procs=2, time_limit_s=120, script=job.script)
    )
    settings.QUEUECAST_SUBMIT_LEASE_S = 0
    assert reconcile_submitting() == 1
    job.refresh_from_db()
    assert (job.state, job.backend_job_id) == ("submitted", backend_id)
    assert len(slurm_jobs_tagged(slurm_conf, job.tag)) == 1


def test_finished_jobs_flow_into_the_site_history(slurm_site, slurm_conf, job_name) -> None:
    client = api_for(make_user("alice"))
    body = job_body(name=job_name, command="true", time_limit_s=60, mold=False, allow_delay=False)
    job = client.post(f"/api/sites/{slurm_site.pk}/jobs/", body, format="json").data
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # accounting (slurmdbd) lags the controller a little
        sync_site(slurm_site)
        row = SiteHistory.objects.filter(site=slurm_site, job_key=job["backend_job_id"]).first()
        if row is not None:
            break
        time.sleep(1)
    assert row is not None, "the finished job never reached the site's history"
    assert (row.procs, row.req_time_s, row.status) == (8, 60.0, 1) and row.run_s < 30


def dead_site(slurm_conf: str, tmp_path: Path, timeout_s: float):
    text = Path(slurm_conf).read_text()
    dead = tmp_path / "slurm.conf"  # the same cluster, but a port no controller listens on
    dead.write_text(
        "\n".join(
            "SlurmctldPort=1" if line.startswith("SlurmctldPort=") else line
            for line in text.splitlines()
        )
    )
    return create_site(
        {
            "name": "dead",
            "backend": "slurm",
            "machine_procs": 128,
            "partition": "batch",
            "config": {"slurm_conf": str(dead), "timeout_s": timeout_s},
            "trace": None,
            "warm_up": False,
        },
        None,
    )


def test_a_controller_that_refuses_the_connection_gives_503_and_stores_nothing(
    slurm_conf, tmp_path
) -> None:
    # sbatch gives up on a closed port after about 9 s with "connect failure": certain.
    site = dead_site(slurm_conf, tmp_path, timeout_s=25)
    client = api_for(make_user("alice"))
    response = post(client, site, "qctest-dead", mold=False, allow_delay=False)
    assert response.status_code == 503, response.data
    assert "Unable to contact slurm controller" in response.data["detail"]
    assert not SiteJob.objects.exists()
    assert client.get(f"/api/sites/{site.pk}/queue/").status_code == 503


def test_an_sbatch_cut_short_by_the_timeout_keeps_its_row_in_doubt(slurm_conf, tmp_path):
    # Stopped before it answered, sbatch may have reached a controller: the row stays.
    site = dead_site(slurm_conf, tmp_path, timeout_s=2)
    client = api_for(make_user("alice"))
    response = post(client, site, "qctest-dead", mold=False, allow_delay=False)
    assert response.status_code == 202, response.data
    row = SiteJob.objects.get(pk=response.data["id"])
    assert (row.state, row.in_doubt) == ("submitting", True) and "2 s" in row.error


def test_squeue_sees_the_whole_queue(slurm_conf) -> None:
    assert isinstance(squeue(slurm_conf), list)


def test_molding_with_the_fitted_bundle_on_a_warm_history(
    slurm_site, slurm_conf, tmp_path, job_name
) -> None:
    # slurm_site's teardown cancels every job named job_name, this test's included.
    from holdqueue.services import predict as site_predict
    from tests.service.test_sites_support import demo_trace

    site = create_site(
        {
            "name": f"warm-{job_name}",
            "backend": "slurm",
            "machine_procs": 128,
            "partition": "batch",
            "config": {"slurm_conf": slurm_conf, "workdir": str(tmp_path)},
            "trace": demo_trace(),
            "warm_up": True,
        },
        None,
    )
    site_predict._MODELS.pop(site.pk, None)
    response = post(
        api_for(make_user("alice")), site, job_name, procs=16, candidates=[4, 8], allow_delay=False
    )
    job = response.data
    assert response.status_code == 201 and job["state"] == "submitted", job
    assert [c["procs"] for c in job["decision"]["molding"]["candidates"]] == [4, 8, 16]
    (slurm,) = slurm_jobs_tagged(slurm_conf, job["tag"])
    assert slurm["cpus"] == job["procs_chosen"]


def test_import_sacct_reads_what_the_real_sacct_prints(slurm_site, slurm_conf, tmp_path) -> None:
    import os
    import subprocess

    from django.core.management import call_command

    fields = "JobID,User,Group,Partition,Submit,Start,End,State,AllocCPUS,Timelimit"
    done = subprocess.run(
        [
            "sacct",
            "--parsable2",
            "--allusers",
            "-X",
            "--starttime",
            "now-1days",
            "--format",
            fields,
        ],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "SLURM_CONF": slurm_conf},
    )
    if done.returncode != 0:
        pytest.skip(f"this dev Slurm keeps no accounting (sacct: {done.stderr.strip()[:120]})")
    path = tmp_path / "acct.txt"
    path.write_text(done.stdout)
    finished = [
        line
        for line in done.stdout.splitlines()[1:]
        if "|None|" not in line and "|Unknown|" not in line
    ]
    call_command("import_sacct", str(path), "--site", slurm_site.name)
    assert SiteHistory.objects.filter(site=slurm_site).count() == len(finished)


def test_a_real_job_sees_none_of_the_services_secrets(
    slurm_site, slurm_conf, job_name, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("QUEUECAST_SECRET_KEY", "s" * 60)
    monkeypatch.setenv("DATABASE_URL", "postgres://queuecast:pw@db/queuecast")
    out = tmp_path / "env.txt"
    script = f"#!/bin/sh\nenv > {out}\n"
    body = job_body(name=job_name, command=None, script=script, time_limit_s=60)
    client = api_for(make_user("alice"))
    response = client.post(
        f"/api/sites/{slurm_site.pk}/jobs/", {**body, "mold": False, "allow_delay": False},
        format="json",
    )  # fmt: skip
    assert response.status_code == 201, response.data
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (out.exists() and out.read_text()):
        time.sleep(0.5)
    env = dict(line.split("=", 1) for line in out.read_text().splitlines() if "=" in line)
    assert env.get("SLURM_JOB_ID") == response.data["backend_job_id"]
    assert "QUEUECAST_SECRET_KEY" not in env and "DATABASE_URL" not in env
    assert env.get("SLURM_EXPORT_ENV") == "NONE"
