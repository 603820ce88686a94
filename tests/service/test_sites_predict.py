"""Predictions for a live site from the predictor's bundle fitted on the site's history, the
history kept in step with the backend, and the sacct import command."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import replace

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from holdqueue.models import SiteHistory, SiteJob
from holdqueue.services import predict as site_predict
from holdqueue.services.sweep import sync_site
from jobmolding.core.headline import RULES, SAYS, headline_wait
from predictor.services.fitted_store import FittedStore
from tests.service.test_sites_support import api_for, job_body, make_user, simulated_site

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_models():
    site_predict._MODELS.clear()
    yield
    site_predict._MODELS.clear()


def test_predict_answers_with_dates_interval_rangesets_method_and_accuracy() -> None:
    site = simulated_site()
    client = api_for(make_user("alice"))
    response = client.post(
        f"/api/sites/{site.pk}/predict/",
        {"procs": 8, "time_limit_s": 3600, "confidence": 0.8},
        format="json",
    )
    assert response.status_code == 200, response.data
    body = response.data
    wait = body["wait"]
    assert wait["confidence"] == 0.8 and wait["low_s"] <= wait["point_s"] <= wait["high_s"]
    assert body["predicted_start_s"] == wait["point_s"]
    assert body["predicted_end_s"] == pytest.approx(wait["point_s"] + body["runtime"]["point_s"])
    # calibrated: each range's probability is how often such ranges held on the tuning part,
    # so together they give the chance that the runtime lies in some range (at most 1)
    assert 0.0 < sum(r["probability"] for r in body["runtime"]["ranges"]) <= 1.0 + 1e-9
    assert body["method"]["wait"] and body["method"]["runtime"]
    assert body["accuracy"]["jobs"] == site_predict.CALIBRATION_JOBS
    # the headline: the rule chosen on the same jobs, said in the answer and applied to it
    chosen = body["accuracy"]["headline"]
    assert chosen["jobs"] == site_predict.CALIBRATION_JOBS and set(chosen["mae_s"]) == set(RULES)
    least = min(chosen["mae_s"].values())
    assert chosen["rule"] == "later" or chosen["mae_s"][chosen["rule"]] == least
    assert wait["rule"] == SAYS[chosen["rule"]] and wait["rule_reason"] == chosen["reason"]
    both = np.array(wait["history_s"]), np.array(wait["queue_s"])
    assert wait["point_s"] == pytest.approx(float(headline_wait(chosen["rule"], *both)))
    start = dt.datetime.fromisoformat(body["predicted_start"].replace("Z", "+00:00"))
    assert abs((start - timezone.now()).total_seconds() - wait["point_s"]) < 60


def test_predict_rejects_a_past_time_and_a_bad_confidence() -> None:
    site = simulated_site()
    client = api_for(make_user("alice"))
    past = (timezone.now() - dt.timedelta(hours=1)).isoformat()
    bad = client.post(
        f"/api/sites/{site.pk}/predict/",
        {"procs": 8, "time_limit_s": 60, "at": past},
        format="json",
    )
    assert bad.status_code == 409 and "past" in bad.data["detail"]
    bad = client.post(
        f"/api/sites/{site.pk}/predict/",
        {"procs": 8, "time_limit_s": 60, "confidence": 1.5},
        format="json",
    )
    assert bad.status_code == 400 and "confidence" in bad.data


def test_a_site_without_history_says_so() -> None:
    site = simulated_site(warm_up=False)
    response = api_for(make_user("alice")).post(
        f"/api/sites/{site.pk}/predict/", {"procs": 8, "time_limit_s": 60}, format="json"
    )
    assert response.status_code == 409 and "0 finished jobs" in response.data["detail"]


def test_a_job_is_molded_with_the_real_bundle_and_its_decision_recorded() -> None:
    site = simulated_site()
    response = api_for(make_user("alice")).post(
        f"/api/sites/{site.pk}/jobs/", job_body(procs=16, candidates=[4, 8]), format="json"
    )
    assert response.status_code == 201, response.data
    job = response.data
    assert job["state"] in ("submitted", "held")
    candidates = job["decision"]["molding"]["candidates"]
    assert [c["procs"] for c in candidates] == [4, 8, 16]
    assert job["procs_chosen"] in (4, 8, 16) and job["decision"]["delay"]["reason"]


def test_sync_learns_finished_jobs_and_our_jobs_backend_states() -> None:
    site = simulated_site(speed=2000.0, warm_up=False)
    site.epoch = timezone.now() - dt.timedelta(seconds=60)  # 120 000 trace seconds ago
    site.save()
    mine = api_for(make_user("alice")).post(
        f"/api/sites/{site.pk}/jobs/", job_body(mold=False, allow_delay=False), format="json"
    )
    first = sync_site(site)
    assert SiteJob.objects.get(pk=mine.data["id"]).backend_state in ("PENDING", "RUNNING")
    assert first["history_added"] > 0
    rows = SiteHistory.objects.filter(site=site)
    assert rows.count() == first["history_added"]
    assert all(r.wait_s >= 0 and r.run_s >= 0 for r in rows)
    again = sync_site(site)  # the same window again adds nothing twice
    assert SiteHistory.objects.filter(site=site).count() == rows.count() + again["history_added"]
    keys = list(SiteHistory.objects.filter(site=site).values_list("job_key", flat=True))
    assert len(keys) == len(set(keys))


SACCT = """JobID|User|Group|Partition|Submit|Start|End|State|AllocCPUS|Timelimit
101|ann|g|batch|2026-11-30T10:00:00|2026-11-30T10:01:00|2026-11-30T10:11:00|COMPLETED|8|00:30:00
101.batch|ann|g|batch|2026-11-30T10:01:00|2026-11-30T10:01:00|2026-11-30T10:11:00|COMPLETED|8|
102|bob|g|batch|2026-11-30T10:05:00|2026-11-30T10:11:00|2026-11-30T10:12:00|FAILED|4|01:00:00
103|bob|g|batch|2026-11-30T10:06:00|2026-11-30T10:12:00|2026-11-30T10:13:00|COMPLETED|x|01:00:00
"""


def test_import_sacct_strict_names_the_line_and_stores_nothing(tmp_path) -> None:
    site = simulated_site(warm_up=False)
    path = tmp_path / "acct.txt"
    path.write_text(SACCT)
    with pytest.raises(CommandError, match="line 5, column AllocCPUS"):
        call_command("import_sacct", str(path), "--site", site.name)
    assert not SiteHistory.objects.filter(site=site).exists()


def test_import_sacct_lenient_imports_the_good_jobs_once(tmp_path, capsys) -> None:
    site = simulated_site(warm_up=False)
    path = tmp_path / "acct.txt"
    path.write_text(SACCT)
    call_command("import_sacct", str(path), "--site", site.name, "--lenient")
    call_command("import_sacct", str(path), "--site", site.name, "--lenient")
    rows = SiteHistory.objects.filter(site=site).order_by("submit_s")
    assert [(r.job_key, r.wait_s, r.run_s, r.procs, r.req_time_s, r.status) for r in rows] == [
        ("101", 60.0, 600.0, 8, 1800.0, 1),
        ("102", 360.0, 60.0, 4, 3600.0, 0),
    ]
    out = capsys.readouterr().out
    assert "2 jobs added" in out and "0 jobs added" in out and "1 bad rows skipped" in out


def test_import_sacct_unknown_site(tmp_path) -> None:
    path = tmp_path / "acct.txt"
    path.write_text(SACCT)
    with pytest.raises(CommandError, match="no site called 'nope'"):
        call_command("import_sacct", str(path), "--site", "nope")


def test_create_site_command_makes_a_simulated_site() -> None:
    simulated_site(name="first")
    create = ["create_site", "demo-sim", "--backend", "simulated", "--trace", "demo-lublin"]
    call_command(*create, "--config", '{"speed": 5}')
    call_command(*create, "--if-missing")  # exists: nothing to do, no error
    with pytest.raises(CommandError, match="no such trace"):
        call_command("create_site", "x", "--backend", "simulated", "--trace", "nope")
    assert SiteJob.objects.count() == 0


def test_site_model_is_fitted_once_for_every_process_and_not_counted_on_each_call(
    settings, tmp_path, monkeypatch, django_assert_num_queries
) -> None:
    settings.QUEUECAST_FITTED_DIR = str(tmp_path)
    site = simulated_site()
    first = site_predict.site_model(site)
    with django_assert_num_queries(0):  # no history count, no fit
        assert site_predict.site_model(site) is first

    def no_fit(site):
        raise AssertionError("fitted again")

    monkeypatch.setattr(site_predict, "_fit", no_fit)
    site_predict._MODELS.clear()  # as a fresh process: the stored bundle answers
    again = site_predict.site_model(site)
    assert again.fitted_at == first.fitted_at and again.history_rows == first.history_rows


def test_a_stale_site_model_answers_while_another_process_refits(
    settings, tmp_path, monkeypatch
) -> None:
    settings.QUEUECAST_FITTED_DIR = str(tmp_path)
    site = simulated_site()
    first = site_predict.site_model(site)
    refits: list[object] = []
    monkeypatch.setattr(site_predict, "_spawn", lambda work: refits.append(work()))
    site_predict._MODELS.put(site.pk, site_predict._Held(
        replace(first, fitted_at=first.fitted_at - 2 * site_predict.REFIT_AGE_S),
        site_predict._ident(site), 0.0))  # fmt: skip
    store = FittedStore(tmp_path)
    with store.lock("site", site_predict._ident(site)):  # another process is refitting
        started = time.monotonic()
        stale = site_predict.site_model(site)
        assert time.monotonic() - started < 1.0
    assert stale.history_rows == first.history_rows and refits == [None]
    assert site_predict._MODELS.get(site.pk).model is stale  # the refit gave way


def test_predict_keeps_a_method_override_with_its_own_fitted_model() -> None:
    site = simulated_site()
    client = api_for(make_user("alice"))
    url = f"/api/sites/{site.pk}/predict/"
    default = client.post(url, {"procs": 8, "time_limit_s": 3600}, format="json")
    median = client.post(url, {"procs": 8, "time_limit_s": 3600, "method": "median"}, format="json")
    assert default.status_code == 200 and median.status_code == 200, median.data
    assert median.data["method"]["wait"] == "median"
    assert median.data["method"]["wait_reason"] is None  # a fixed method: nothing chosen
    assert default.data["method"]["wait"] != "median"
    assert site.pk in site_predict._MODELS and (site.pk, "median") in site_predict._OVERRIDES
    bad = client.post(url, {"procs": 8, "time_limit_s": 60, "method": "magic"}, format="json")
    assert bad.status_code == 400 and "method" in bad.data
    site_predict._OVERRIDES.clear()


def test_a_whole_machine_request_starts_after_the_queued_whole_machine_jobs() -> None:
    """Issue 19: behind queued whole-machine jobs, "start now" is never the answer. The queue
    API gives each queued job a refreshed predicted start; on this site, whose history is its
    EASY scheduler's own, the rule kept is the later of the history estimate and the
    queue-based start (docs/sites.md)."""
    site = simulated_site()
    client = api_for(make_user("alice"))
    full = {"procs": site.machine_procs, "time_limit_s": 3600}
    empty = client.post(f"/api/sites/{site.pk}/predict/", full, format="json").data
    for _ in range(3):
        body = job_body(procs=site.machine_procs, time_limit_s=3600, mold=False, allow_delay=False)
        assert client.post(f"/api/sites/{site.pk}/jobs/", body, format="json").status_code == 201
    queue = client.get(f"/api/sites/{site.pk}/queue/").data["jobs"]
    ours = [j for j in queue if j["procs"] == site.machine_procs and j["state"] == "waiting"]
    assert len(ours) >= 3 and all(j["predicted_start"] for j in ours)
    starts = sorted(dt.datetime.fromisoformat(j["predicted_start"].replace("Z", "+00:00"))
                    for j in ours)  # fmt: skip
    assert starts[0] < starts[1] < starts[2]  # one after the other: each needs the machine
    answer = client.post(f"/api/sites/{site.pk}/predict/", full, format="json").data
    wait = answer["wait"]
    assert wait["rule"] == SAYS["later"], answer["accuracy"]["headline"]
    assert answer["predicted_start_s"] == max(wait["history_s"], wait["queue_s"])
    start = dt.datetime.fromisoformat(answer["predicted_start"].replace("Z", "+00:00"))
    assert start > starts[-1]
    assert answer["predicted_start_s"] > empty["predicted_start_s"]  # a full queue waits longer


def test_a_refit_replaces_the_site_s_stored_bundle_and_keeps_the_other_models(
    settings, tmp_path
) -> None:
    """Two versions of a big site bundle used to push a trace's bundle out of the store's
    bytes (HPC2N: 2 x 1.6 GB beside 1.9 GB in 4 GB): a refit supersedes the older one."""
    settings.QUEUECAST_FITTED_DIR = str(tmp_path)
    site = simulated_site()
    store = FittedStore(tmp_path)
    store.save("trace", "7", "v", b"x" * 1000)
    first = site_predict.fit_and_store(site, store, blocking=False)
    assert first is not None and store.latest("site", site_predict._ident(site)) is not None
    site_file = next(tmp_path.glob("site-*.pkl"))
    store.max_bytes = site_file.stat().st_size + 1500  # room for one site bundle and the trace
    second = site_predict.fit_and_store(site, store, blocking=False)
    assert second is not None and second.fitted_at > first.fitted_at
    assert [p.name for p in tmp_path.glob("site-*.pkl")] != [site_file.name]
    assert len(list(tmp_path.glob("site-*.pkl"))) == 1
    assert store.load("trace", "7", "v") == b"x" * 1000  # not evicted


def test_no_refit_starts_once_the_code_on_disk_changed(settings, tmp_path, monkeypatch) -> None:
    """A process left running across a code change: its child would store the refit under
    the new code's tag, this process would never load it and would start it again at every
    check. No child starts; the stale model keeps answering and the status says why."""
    from predictor.services import background_fit, fitted_store

    settings.QUEUECAST_FITTED_DIR = str(tmp_path)
    site = simulated_site()
    first = site_predict.site_model(site)
    monkeypatch.setattr(site_predict, "fit_inline", lambda: False)
    monkeypatch.setattr(site_predict, "_spawn", lambda work: work())
    monkeypatch.setattr(fitted_store, "code_on_disk", lambda: "0123456789ab")  # edited since
    children: list[object] = []
    monkeypatch.setattr(background_fit.subprocess, "run", lambda *a, **k: children.append(a))
    site_predict._MODELS.put(site.pk, site_predict._Held(
        replace(first, fitted_at=first.fitted_at - 2 * site_predict.REFIT_AGE_S),
        site_predict._ident(site), 0.0))  # fmt: skip
    stale = site_predict.site_model(site)
    assert children == [] and stale.history_rows == first.history_rows
    status = FittedStore(tmp_path).read_status("site", site_predict._ident(site))
    assert status is not None and status["state"] == "failed"
    assert "restart the process" in status["error"]


def test_a_site_model_trains_no_model_of_its_tuning_part(settings, tmp_path) -> None:
    """A site is asked about "now" only: its fit trains the GBM and quantile blocks after the
    tuning part, not the tuning part's (``FittedBundle.train_ahead(tuning_part=False)``)."""
    from predictor.core.state.retrain import all_boundaries, later_boundaries

    settings.QUEUECAST_FITTED_DIR = str(tmp_path)
    settings.QUEUECAST_SERVICE_WAIT_METHOD = "gbm"
    settings.QUEUECAST_SERVICE_RUNTIME_METHOD = "quantile"
    bundle = site_predict.site_model(simulated_site()).bundle
    gbm, quantile, n = bundle.wait, bundle.runtime, len(bundle.jobs)
    assert set(gbm._models) == set(later_boundaries(n, gbm.n_tune_, gbm.retrain_every))
    ctx = quantile.history_
    assert set(quantile._models) == set(later_boundaries(n, ctx.n_tune, quantile.every_))
    assert set(all_boundaries(n, ctx.n_tune, quantile.every_)) - set(quantile._models)


def test_the_interval_is_calibrated_on_the_errors_of_the_wait_the_site_tells() -> None:
    """The pool of the wait interval is the headline's errors on the last jobs (before the
    rule was chosen it was the history estimate's, while the point was the headline)."""
    from jobmolding.core.headline_scores import choose_on_history
    from predictor.core.wait.intervals import scores

    site = simulated_site()
    api_for(make_user("alice")).post(
        f"/api/sites/{site.pk}/predict/", {"procs": 8, "time_limit_s": 600}, format="json"
    )
    model = site_predict.site_model(site)
    choice, answered = choose_on_history(model.bundle, site_predict.CALIBRATION_JOBS)
    assert model.rule == choice
    told = headline_wait(choice.rule, answered.history_s, answered.queue_s)
    np.testing.assert_array_equal(model.wait_scores, scores(told, answered.actual_s))
    assert model.accuracy["wait_mae_s"] == pytest.approx(np.mean(np.abs(told - answered.actual_s)))


def test_a_refit_scores_the_answers_the_site_told_the_jobs_it_submitted() -> None:
    """Jobs submitted at their decision keep what they were told; once they have ended last,
    the next fit scores those answers (not answered again), and says how many it did."""
    from holdqueue.services.history import history_frame
    from holdqueue.services.told import site_told
    from jobmolding.core.headline_scores import last_rows_in

    site = simulated_site()
    client = api_for(make_user("alice"))
    plain = client.post(f"/api/sites/{site.pk}/jobs/",
                        job_body(mold=False, allow_delay=False), format="json")  # fmt: skip
    body = job_body(procs=16, candidates=[4, 8], allow_delay=False)
    decided = client.post(f"/api/sites/{site.pk}/jobs/", body, format="json")
    assert plain.status_code == decided.status_code == 201, (plain.data, decided.data)
    jobs = [SiteJob.objects.get(pk=r.data["id"]) for r in (plain, decided)]
    told = [j.decision["told"] for j in jobs]
    assert told[0]["history_s"] >= 0 and told[0]["runtime_s"] > 0
    assert told[0]["rule"] == told[1]["rule"] == site_predict.site_model(site).rule.rule
    assert jobs[1].decision["molding"]["chosen_procs"] == jobs[1].procs_chosen
    last = max(r.submit_s + r.wait_s + r.run_s for r in SiteHistory.objects.filter(site=site))
    for k, job in enumerate(jobs):  # they ran and ended after every other job
        SiteHistory.objects.create(site=site, job_key=job.backend_job_id, submit_s=last + k,
                                   wait_s=30.0, run_s=500.0, procs=job.procs_chosen,
                                   req_time_s=600.0)  # fmt: skip
    model = site_predict._fit(site)
    assert model.rule.told == 2 and "2 on the answer the site told them" in model.accuracy["how"]
    frame = history_frame(site)
    rows = last_rows_in(frame, site_predict.CALIBRATION_JOBS)
    got = site_told(site, np.ones(len(frame), dtype=bool))(rows)
    assert got.kept.sum() == 2 and got.kept[-2:].all()
    assert got.history_s[-2:].tolist() == [t["history_s"] for t in told]
    assert got.runtime_s[-2:].tolist() == [t["runtime_s"] for t in told]
    # a frame read before a row was added: nothing matched by position, all answered again
    stale = site_told(site, np.ones(len(frame) - 1, dtype=bool))(rows[:-1])
    assert not stale.kept.any()
    held_job = client.post(f"/api/sites/{site.pk}/jobs/",
                           job_body(begin=(timezone.now() + dt.timedelta(hours=1)).isoformat()),
                           format="json")  # fmt: skip
    assert held_job.status_code == 201 and "told" not in held_job.data["decision"]


def test_the_interval_is_learnt_from_the_jobs_the_site_told_as_they_start() -> None:
    """Below ``TOLD_FROM`` told jobs started the interval is the fit's pool; from then on it
    is the online rule's over those jobs (their told figures under the site's rule, their
    waits from submission to start), recomputed when a told job starts."""
    from holdqueue.services import interval as site_interval
    from holdqueue.services import queue_view
    from holdqueue.services import told as site_told
    from holdqueue.services.interval import TOLD_FROM
    from predictor.core.wait.local_interval import MIN_POOL, local_now

    assert TOLD_FROM > MIN_POOL  # the rule answers from MIN_POOL; a site reads it later
    site_interval._STATES.clear()
    site_told._TOLD.clear()
    site = simulated_site()
    client = api_for(make_user("alice"))
    url, query = f"/api/sites/{site.pk}/predict/", {"procs": 8, "time_limit_s": 600}
    first = client.post(url, query, format="json")
    assert first.status_code == 200, first.data
    assert first.data["wait"]["interval"]["from"] == "fit"
    model = site_predict.site_model(site)
    owner = make_user("bob")
    base = timezone.now() - dt.timedelta(days=2)
    rng = np.random.default_rng(1)

    def told_job(k: int, started: bool = True) -> SiteJob:
        at = base + dt.timedelta(seconds=600 * k)
        wait = float(rng.exponential(900.0))
        figures = {"history_s": float(rng.exponential(600.0)), "queue_s": None,
                   "runtime_s": 300.0}  # fmt: skip
        return SiteJob.objects.create(
            site=site, owner=owner, script="#!/bin/sh\n", procs_requested=4, procs_chosen=4,
            time_limit_s=600, state=SiteJob.FINISHED,
            arrived_at=at, submitted_at=at, backend_job_id=f"t{k}",
            started_at=at + dt.timedelta(seconds=wait) if started else None,
            decision={"told": figures},
        )  # fmt: skip

    for k in range(TOLD_FROM):
        told_job(k, started=k != 3)  # one still waits: not known, not fed
    queue_view.changed(site)
    below = client.post(url, {**query, "confidence": 0.8}, format="json").data["wait"]
    assert below["interval"]["from"] == "fit"  # TOLD_FROM - 1 started: the fit's pool still
    assert f"fewer than {TOLD_FROM} jobs told by this site" in below["interval"]["about"]
    SiteJob.objects.filter(backend_job_id="t3").update(started_at=timezone.now())
    fresh_view = client.post(url, {**query, "confidence": 0.8}, format="json")
    assert fresh_view.data["wait"]["interval"]["from"] == "fit"  # read under the same view
    queue_view.changed(site)  # the next read of the queue (jobs started) reads them too
    second = client.post(url, {**query, "confidence": 0.8}, format="json")
    assert second.status_code == 200, second.data
    wait = second.data["wait"]
    assert wait["interval"]["from"] == "told" and wait["interval"]["jobs"] == TOLD_FROM
    told = site_told.told_started(site)
    assert told.arrival_s.size == TOLD_FROM and np.all(np.diff(told.arrival_s) >= 0)
    state = local_now(told.told_s(model.rule.rule), told.wait_s, told.arrival_s, told.start_s,
                      float(told.start_s.max()), 0.8)  # fmt: skip
    assert state is not None
    low, high = state.interval(np.array([wait["point_s"]]))
    assert (wait["low_s"], wait["high_s"]) == (float(low[0]), float(high[0]))
    assert wait["interval"]["level_used"] == state.target
    assert wait["interval"]["neighbours"] == TOLD_FROM  # fewer than 200: every one
    assert f"the errors of all {TOLD_FROM} jobs told by this site" in wait["interval"]["about"]
    # a told job that starts is fed at the next read of the queue
    told_job(TOLD_FROM)
    queue_view.changed(site)
    third = client.post(url, {**query, "confidence": 0.8}, format="json")
    assert third.data["wait"]["interval"]["jobs"] == TOLD_FROM + 1


def test_the_answer_says_how_far_off_the_waits_the_site_told_were() -> None:
    """The live check: the jobs the site told that started, each against the wait it was told
    by the rule kept with it (today's rule where none was kept)."""
    from holdqueue.services import queue_view
    from holdqueue.services import told as site_told
    from predictor.core.wait.local_interval import MIN_POOL

    site_told._TOLD.clear()
    site = simulated_site()
    client = api_for(make_user("alice"))
    url, query = f"/api/sites/{site.pk}/predict/", {"procs": 8, "time_limit_s": 600}
    first = client.post(url, query, format="json")
    assert first.status_code == 200 and first.data["accuracy"]["told"] is None
    rule = site_predict.site_model(site).rule.rule
    other = next(r for r in RULES if r != rule)
    owner, base = make_user("bob"), timezone.now() - dt.timedelta(days=2)
    rng = np.random.default_rng(2)
    n = MIN_POOL + 20
    h, q, waited = rng.exponential(600.0, n), rng.exponential(900.0, n), rng.exponential(800.0, n)
    for k in range(n):
        at = base + dt.timedelta(seconds=600 * k)
        told = {"history_s": h[k], "queue_s": q[k], "runtime_s": 300.0,
                **({"rule": other} if k % 2 else {})}  # fmt: skip
        SiteJob.objects.create(
            site=site, owner=owner, script="#!/bin/sh\n", procs_requested=4, procs_chosen=4,
            time_limit_s=600, state=SiteJob.FINISHED, arrived_at=at, submitted_at=at,
            backend_job_id=f"a{k}", started_at=at + dt.timedelta(seconds=float(waited[k])),
            decision={"told": told},
        )  # fmt: skip
    queue_view.changed(site)
    got = client.post(url, query, format="json").data["accuracy"]["told"]
    odd = np.arange(n) % 2 == 1
    said = np.where(odd, headline_wait(other, h, q), headline_wait(rule, h, q))
    waited = np.array([float(dt.timedelta(seconds=float(w)).total_seconds()) for w in waited])
    assert got["jobs"] == n
    assert got["mae_s"] == pytest.approx(np.mean(np.abs(said - waited)), abs=1e-3)
    assert got["median_abs_error_s"] == pytest.approx(np.median(np.abs(said - waited)), abs=1e-3)
    assert got["longer_share"] == pytest.approx(np.mean(waited > said))
    assert got["mean_wait_s"] == pytest.approx(waited.mean(), abs=1e-3)
    assert f"({n - odd.sum()} told before the rule was kept" in got["about"]
    # the chance to start within T: the same told jobs, the site's rule now, the trace's rule
    from predictor.core.wait.km_within import p_within_censored
    from predictor.core.wait.p_within import p_within

    asked = client.post(url, {**query, "within_s": 600.0}, format="json").data["wait"]
    told = site_told.told_started(site)
    want = p_within(np.array([asked["point_s"]]), told.told_s(rule), told.wait_s, 600.0)
    assert asked["within"]["p"] == pytest.approx(float(want[0]), abs=1e-12)
    assert asked["within"]["jobs"] == n and asked["within"]["waiting"] == 0
    assert asked["within"]["within_s"] == 600.0
    assert client.post(url, query, format="json").data["wait"]["within"] is None
    # a told job still waiting (for two days) counts as waiting at least that long
    SiteJob.objects.create(
        site=site, owner=owner, script="#!/bin/sh\n", procs_requested=4, procs_chosen=4,
        time_limit_s=600, state=SiteJob.PENDING, arrived_at=base, submitted_at=base,
        backend_job_id="w0", decision={"told": {"history_s": 10.0, "queue_s": 20.0,
                                                "runtime_s": 300.0}},
    )  # fmt: skip
    queue_view.changed(site)
    again = client.post(url, {**query, "within_s": 600.0}, format="json").data["wait"]
    later = again["within"]
    waiting = site_told.told_waiting(site)
    assert later["waiting"] == 1 and waiting.arrival_s.size == 1 and later["jobs"] == n + 1
    said = np.concatenate([waiting.told_s(rule), told.told_s(rule)])  # it arrived first
    waited = np.concatenate([[2 * 86400.0], told.wait_s])
    started = np.arange(n + 1) > 0
    km = p_within_censored(np.array([again["point_s"]]), said, waited, started, 600.0)
    assert later["p"] == pytest.approx(float(km[0]), abs=1e-12)
    assert later["p"] < asked["within"]["p"]
    assert "1 still waiting" in later["about"]


def test_a_site_interval_says_which_of_the_told_jobs_it_read(monkeypatch) -> None:
    """With more told jobs started than neighbours, the interval is the run of the nearest
    ones' waits, and ``about`` says how many of how many."""
    from holdqueue.services import interval as site_interval
    from predictor.core.wait.local_interval import LocalNow

    pred = np.array([0.0, 10.0, 20.0, 30.0, 1000.0, 1100.0, 1200.0, 1300.0, 1400.0, 5000.0])
    wait = np.array([0.0, 5.0, 40.0, 25.0, 900.0, 1500.0, 800.0, 2000.0, 1200.0, 9000.0])
    state = LocalNow(0.8, pred, wait, 0.8, known=120, k=4)
    monkeypatch.setattr(site_interval, "adaptive_state", lambda *a, **k: state)
    low, high, how = site_interval.wait_interval(None, "later", np.zeros(1), 1150.0, 0.8)
    # the 4 told nearest 1150 s: 1000, 1100, 1200, 1300 (waits 900, 1500, 800, 2000) ->
    # 1150 + their errors: 1050, 1550, 750, 1850; ceil(0.8 x 5) = 4 of them: the whole run
    assert (low, high) == (750.0, 1850.0)
    assert how["neighbours"] == 4 and how["jobs"] == 120
    assert (
        "the errors of the 4 jobs told a wait nearest this one, of the last 10 of 120"
        in how["about"]
    )
