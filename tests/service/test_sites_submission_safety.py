"""Submissions whose outcome is unknown are looked up by tag before any retry, a row is never
deleted once its job may be in the batch system, a replayed Idempotency-Key always points at a
row that exists, and no secret reaches a job (stand-in Slurm tools, ``tests/standin_slurm.py``).
"""

from __future__ import annotations

import pytest

from holdqueue.models import SiteJob
from holdqueue.services.sites import create_site
from holdqueue.services.sweep import reconcile_submitting, release_due, sweep
from tests.service.test_sites_support import api_for, held, job_body, make_user
from tests.standin_slurm import StandIn

pytestmark = pytest.mark.django_db


@pytest.fixture
def slurm(tmp_path, monkeypatch) -> StandIn:
    monkeypatch.setenv("QUEUECAST_SECRET_KEY", "s" * 60)
    monkeypatch.setenv("DATABASE_URL", "postgres://queuecast:pw@db/queuecast")
    return StandIn(tmp_path / "bin").on_path(monkeypatch)


@pytest.fixture
def site(tmp_path, settings):
    settings.QUEUECAST_RELEASE_ATTEMPTS = 2
    return create_site(
        {
            "name": "cluster",
            "backend": "slurm",
            "machine_procs": 64,
            "partition": "batch",
            "config": {"timeout_s": 1.0, "workdir": str(tmp_path)},
            "trace": None,
            "warm_up": False,
        },
        None,
    )


def lease_over(settings) -> None:
    settings.QUEUECAST_SUBMIT_LEASE_S = 0


def post(client, site, key=None, **extra):
    headers = {"Idempotency-Key": key} if key else {}
    body = job_body(mold=False, allow_delay=False, **extra)
    return client.post(f"/api/sites/{site.pk}/jobs/", body, format="json", headers=headers)


# --- High 1: reconcile by tag before any retry ---------------------------------------------
def test_a_release_that_times_out_is_looked_up_by_tag_not_sent_again(slurm, site, alice, settings):
    job = held(site, alice)
    slurm.mode("sbatch", "accept-then-hang")
    assert release_due() == 1
    job.refresh_from_db()
    assert (job.state, job.in_doubt) == ("submitting", True) and "looks its tag up" in job.error
    assert release_due() == 0 and reconcile_submitting() == 0  # not before the lease is over
    lease_over(settings)
    slurm.mode("sbatch", "ok")
    assert reconcile_submitting() == 1
    job.refresh_from_db()
    assert (job.state, job.backend_job_id, job.in_doubt) == ("submitted", "1000", False)
    assert len(slurm.calls("sbatch")) == 1 and len(slurm.tagged(job.tag)) == 1


def test_a_timed_out_release_never_seen_by_the_batch_system_is_tried_again_once(
    slurm, site, alice, settings
):
    job = held(site, alice)
    slurm.mode("sbatch", "hang")
    release_due()
    lease_over(settings)
    assert reconcile_submitting() == 1
    job.refresh_from_db()
    assert job.state == "held"  # looked up: no job carries the tag, so a new attempt is safe
    slurm.mode("sbatch", "ok")
    assert release_due() == 1
    job.refresh_from_db()
    assert job.state == "submitted" and len(slurm.tagged(job.tag)) == 1


def test_a_job_in_doubt_is_never_failed_while_the_lookup_cannot_be_made(
    slurm, site, alice, settings
):
    job = held(site, alice, attempts=1)  # its last attempt: a failure would be final
    slurm.mode("sbatch", "accept-then-hang")
    release_due()
    lease_over(settings)
    slurm.mode("squeue", "down")
    for _ in range(3):
        sweep()
    job.refresh_from_db()
    assert (job.state, job.in_doubt) == ("submitting", True)
    slurm.mode("squeue", "ok")
    sweep()  # looked up (submitted), then synced: the stand-in says PENDING
    job.refresh_from_db()
    assert job.state == "pending" and job.backend_job_id == "1000"
    assert len(slurm.calls("sbatch")) == 1


def test_out_of_attempts_a_job_fails_only_once_its_tag_is_known_to_be_absent(
    slurm, site, alice, settings
):
    job = held(site, alice, attempts=1)
    slurm.mode("sbatch", "hang")
    release_due()
    lease_over(settings)
    assert reconcile_submitting() == 1
    job.refresh_from_db()
    assert job.state == "failed" and "no job carries its tag" in job.error
    assert len(slurm.calls("squeue")) >= 1 and slurm.jobs() == []


def test_an_immediate_submission_that_times_out_keeps_its_row_and_answers_202(
    slurm, site, alice, settings
):
    slurm.mode("sbatch", "accept-then-hang")
    client = api_for(alice)
    first = post(client, site, key="k-1")
    assert first.status_code == 202, first.data
    assert first.data["state"] == "submitting" and first.data["in_doubt"] is True
    again = post(client, site, key="k-1")  # the retry points at the same, existing row
    assert again.status_code == 202 and again.data["id"] == first.data["id"]
    assert SiteJob.objects.filter(pk=first.data["id"]).exists()
    assert len(slurm.calls("sbatch")) == 1
    lease_over(settings)
    sweep()
    row = SiteJob.objects.get(pk=first.data["id"])
    assert (row.state, row.backend_job_id) == ("pending", "1000")
    assert len(slurm.jobs()) == 1


def test_a_retry_while_the_first_request_is_still_submitting_never_sees_a_doomed_row(
    slurm, site, alice, monkeypatch
):
    """The issue's 'nine retries told 201 submitting for a job then deleted': while the first
    request talks to a batch system that then turns out to be down, a retry gets 409."""
    from holdqueue.core.backends.slurm import SlurmBackend

    client = api_for(alice)
    seen = []
    real_submit = SlurmBackend.submit

    def submit_with_a_retry_meanwhile(self, spec):
        seen.append(post(client, site, key="same"))
        return real_submit(self, spec)

    monkeypatch.setattr(SlurmBackend, "submit", submit_with_a_retry_meanwhile)
    slurm.mode("sbatch", "down")
    first = post(client, site, key="same")
    assert first.status_code == 503 and "Unable to contact" in first.data["detail"]
    (retry,) = seen
    assert retry.status_code == 409 and "still being submitted" in retry.data["detail"]
    assert not SiteJob.objects.exists() and slurm.jobs() == []
    slurm.mode("sbatch", "ok")
    monkeypatch.setattr(SlurmBackend, "submit", real_submit)
    later = post(client, site, key="same")  # the batch system is back: the key works again
    assert later.status_code == 201 and later.data["state"] == "submitted"


def test_an_immediate_submission_the_batch_system_never_got_leaves_no_row(slurm, site, alice):
    slurm.mode("sbatch", "down")
    response = post(api_for(alice), site, key="k-2")
    assert response.status_code == 503
    assert not SiteJob.objects.exists() and slurm.jobs() == []


def test_a_second_copy_found_by_tag_is_cancelled_by_the_sync(slurm, site, alice):
    job = held(site, alice)
    release_due()
    job.refresh_from_db()
    copy = dict(slurm.jobs()[0], job_id=2000)
    slurm.set_jobs([*slurm.jobs(), copy])
    sweep()
    job.refresh_from_db()
    assert job.backend_job_id == "1000" and "second copy" in job.error and "2000" in job.error
    assert [c["args"][-1] for c in slurm.calls("scancel")] == ["2000"]


# --- High 2 and 3: nothing of the service, no stray option --------------------------------
def test_no_secret_of_the_service_reaches_sbatch_or_the_job(slurm, site, alice) -> None:
    assert post(api_for(alice), site).status_code == 201
    (call,) = slurm.calls("sbatch")
    assert "QUEUECAST_SECRET_KEY" not in call["env"] and "DATABASE_URL" not in call["env"]
    assert "--export=NONE" in call["args"]


@pytest.mark.parametrize(
    ("extra", "field", "line"),
    [
        ({"command": "#SBATCH --array=0-999\nsleep 1"}, "command", 1),
        ({"command": None, "script": "#!/bin/sh\n#SBATCH --gid=0\nid\n"}, "script", 2),
        ({"command": None, "script": "#!/bin/bash\n# ok\n#SBATCH --exclusive\nrun\n"}, "script", 3),
    ],
)
def test_slurm_options_in_a_script_or_command_are_refused_naming_the_line(
    slurm, site, alice, extra, field, line
):
    response = post(api_for(alice), site, **extra)
    assert response.status_code == 400, response.data
    assert (response.data["field"], response.data["line"]) == (field, line)
    assert "sets Slurm options" in response.data["detail"]
    assert not SiteJob.objects.exists() and slurm.calls("sbatch") == []


def test_options_the_site_allows_pass_and_a_directive_after_the_first_command_is_text(
    slurm, site, alice
):
    site.config = {**site.config, "allowed_directives": ["--mail-type"]}
    site.save()
    script = "#!/bin/sh\n#SBATCH --mail-type=END\nrun\n#SBATCH --array=1-9\n"
    response = post(api_for(alice), site, command=None, script=script)
    assert response.status_code == 201, response.data
    assert slurm.calls("sbatch")[0]["script"] == script


def test_submit_as_owner_uses_the_account_table_never_the_username(slurm, site):
    from holdqueue.models import ClusterAccount

    site.config = {**site.config, "submit_as_owner": True}
    site.save()
    zero = make_user("0")
    refused = post(api_for(zero), site)
    assert refused.status_code == 403 and "cluster_account" in refused.data["detail"]
    assert not SiteJob.objects.exists() and slurm.calls("sbatch") == []
    ClusterAccount.objects.create(site=site, user=zero, account="zed")
    assert post(api_for(zero), site).status_code == 201
    (call,) = slurm.calls("sbatch")
    assert "--uid=zed" in call["args"] and "--uid=0" not in call["args"]


def test_a_held_job_whose_account_mapping_went_away_fails_saying_so(slurm, site, alice):
    site.config = {**site.config, "submit_as_owner": True}
    site.save()
    job = held(site, alice)
    release_due()
    job.refresh_from_db()
    assert job.state == "failed" and "has none mapped" in job.error
    assert slurm.calls("sbatch") == []


def test_two_copies_of_a_job_still_in_doubt_keep_the_first_and_cancel_the_other(
    slurm, site, alice, settings
):
    job = held(site, alice)
    slurm.mode("sbatch", "accept-then-hang")
    release_due()
    copy = dict(slurm.jobs()[0], job_id=999_999)
    slurm.set_jobs([copy, *slurm.jobs()])  # listed first, submitted later
    sweep()
    job.refresh_from_db()
    assert (job.state, job.backend_job_id) == ("pending", "1000")
    assert [c["args"][-1] for c in slurm.calls("scancel")] == ["999999"]
