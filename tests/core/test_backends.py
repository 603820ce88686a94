"""Backends: the simulated cluster replays exactly, cancels, reports; Slurm's JSON is read right
and its failures map to the contract's errors (fake tools on PATH, no Slurm needed)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import numpy as np
import pytest

from holdqueue.core.backends.base import (
    BackendError,
    BackendUnavailable,
    JobSpec,
    SubmissionRejected,
)
from holdqueue.core.backends.registry import make_backend
from holdqueue.core.backends.simulated import Background, MemoryStore, SimulatedBackend
from holdqueue.core.backends.slurm import SlurmBackend, _time_limit


def background() -> Background:
    # Two 4-proc jobs on an 8-proc machine, then an 8-proc job that must wait for both; a
    # 1-proc job at 10 000 s makes the cycle long (span 10 000 + a mean gap of 3 333 s).
    return Background(
        submit_s=np.array([0.0, 0.0, 10.0, 10_000.0]),
        runtime_s=np.array([100.0, 50.0, 30.0, 1.0]),
        estimate_s=np.array([100.0, 100.0, 100.0, 1.0]),
        procs=np.array([4, 4, 8, 1]),
        user=np.array([1, 2, 3, 4]),
    )


def cluster(clock: list[float], speed: float = 1.0) -> SimulatedBackend:
    return SimulatedBackend(
        background(),
        8,
        epoch_ts=1000.0,
        store=MemoryStore(),
        speed=speed,
        runtime_fraction=0.5,
        clock=lambda: clock[0],
    )


def spec(tag: str, procs: int, limit: int = 40) -> JobSpec:
    return JobSpec(tag=tag, name=tag, procs=procs, time_limit_s=limit, script="#!/bin/sh\n")


def test_simulated_cluster_reports_the_replay_state_at_the_wall_clock() -> None:
    clock = [1000.0 + 20.0]
    sim = cluster(clock)
    states = {j.backend_id: j.state for j in sim.jobs_at(clock[0])}
    # At t=20: jobs 0 and 1 run (0..100, 0..50), the 8-proc job waits.
    assert states == {"t0-0": "running", "t0-1": "running", "t0-2": "waiting"}
    clock[0] = 1000.0 + 60.0
    finished = sim.finished_since(1000.0)
    assert [(j.backend_id, j.end_ts) for j in finished] == [("t0-1", 1050.0)]


def test_simulated_speed_maps_trace_seconds_to_wall_seconds() -> None:
    clock = [1000.0 + 6.0]  # speed 10: trace time 60
    sim = cluster(clock, speed=10.0)
    done = {j.backend_id: j.end_ts for j in sim.finished_since(0.0)}
    assert done == {"t0-1": pytest.approx(1005.0)}  # ended at trace 50 = wall 1005


def test_submitted_job_joins_the_replay_and_waits_its_turn() -> None:
    clock = [1000.0 + 20.0]
    sim = cluster(clock)
    bid = sim.submit(spec("qc-1", 8, limit=40))
    clock[0] = 1000.0 + 21.0
    mine = [j for j in sim.active() if j.tag == "qc-1"]
    assert [(j.backend_id, j.state) for j in mine] == [(bid, "waiting")]
    # FCFS behind the earlier 8-proc job: it starts at 100 (after job 0) and runs to 130,
    # then ours starts at 130 and runs 0.5 x 40 = 20 s.
    clock[0] = 1000.0 + 200.0
    (job,) = [j for j in sim.finished_since(0.0) if j.tag == "qc-1"]
    assert (job.start_ts, job.end_ts, job.outcome) == (1130.0, 1150.0, "COMPLETED")


def test_cancel_while_waiting_removes_the_job_and_reports_it_cancelled() -> None:
    clock = [1020.0]
    sim = cluster(clock)
    bid = sim.submit(spec("qc-2", 8))
    clock[0] = 1025.0
    sim.cancel(bid)
    clock[0] = 1030.0
    assert [j.tag for j in sim.active() if j.tag] == []
    (job,) = [j for j in sim.finished_since(0.0) if j.tag == "qc-2"]
    assert (job.outcome, job.start_ts) == ("CANCELLED", None)


def test_cancel_while_running_ends_the_job_at_the_cancellation() -> None:
    clock = [1000.0 + 140.0]
    sim = cluster(clock)
    bid = sim.submit(spec("qc-3", 2, limit=1000))  # fits beside the running 8? no: all free
    clock[0] = 1000.0 + 150.0
    (running,) = [j for j in sim.active() if j.tag == "qc-3"]
    assert running.state == "running"
    sim.cancel(bid)
    clock[0] = 1000.0 + 160.0
    (job,) = [j for j in sim.finished_since(0.0) if j.tag == "qc-3"]
    assert (job.outcome, job.end_ts) == ("CANCELLED", 1150.0)


def test_simulated_refuses_a_job_larger_than_the_machine() -> None:
    with pytest.raises(SubmissionRejected, match="outside 1..8"):
        cluster([1000.0]).submit(spec("big", 9))


def test_trace_repeats_so_the_queue_never_runs_dry() -> None:
    span = background().span_s
    assert span == pytest.approx(10_000 + 10_000 / 3)
    clock = [1000.0 + 3 * span + 1.0]
    ids = {j.backend_id for j in cluster(clock).jobs_at(clock[0])}
    assert {"t3-0", "t3-1"} <= ids and not any(i.startswith("t0-") for i in ids)
    # the window is the previous cycle and this one: every job of cycle 2, then cycle 3's
    # jobs submitted by now, named "t<cycle>-<row>"
    every = [j.backend_id for j in cluster(clock).jobs_at(clock[0])]
    assert every == ["t2-0", "t2-1", "t2-2", "t2-3", "t3-0", "t3-1"]


def test_make_backend_rejects_an_unknown_kind() -> None:
    with pytest.raises(ValueError, match="slurm' or 'simulated"):
        make_backend("pbs")


# --- Slurm with fake tools ---------------------------------------------------------------
def fake_tool(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


@pytest.fixture
def fake_path(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    return tmp_path


def test_time_limit_is_written_as_hours_minutes_seconds() -> None:
    assert [_time_limit(s) for s in (59, 3600, 90061)] == ["0:00:59", "1:00:00", "25:01:01"]


def test_sbatch_gets_the_script_as_a_file_and_the_tag_as_comment(fake_path) -> None:
    log = fake_path / "args"
    fake_tool(
        fake_path,
        "sbatch",
        f'printf "%s\\n" "$@" > {log}\ncp "$#" /dev/null\n'
        f'eval last=\\${{$#}}; cp "$last" {fake_path}/script\necho "42;qc"\n',
    )
    script = "#!/bin/sh\necho '$(rm -rf /)' ; `id`\n"
    bid = SlurmBackend(partition="batch").submit(
        JobSpec(tag="qc-9", name="n", procs=3, time_limit_s=90, script=script)
    )
    args = log.read_text().splitlines()
    assert bid == "42"
    assert {
        "--parsable",
        "--ntasks=3",
        "--time=0:01:30",
        "--comment=qc-9",
        "--partition=batch",
    } <= set(args)
    assert (fake_path / "script").read_text() == script


def test_sbatch_refusal_is_a_rejection_and_a_dead_controller_is_unavailable(fake_path) -> None:
    fake_tool(
        fake_path, "sbatch", 'echo "sbatch: error: Invalid partition name specified" >&2\nexit 1\n'
    )
    with pytest.raises(SubmissionRejected, match="Invalid partition"):
        SlurmBackend().submit(spec("a", 1))
    fake_tool(fake_path, "sbatch", 'echo "Unable to contact slurm controller" >&2\nexit 1\n')
    with pytest.raises(BackendUnavailable, match="Unable to contact"):
        SlurmBackend().submit(spec("a", 1))


def test_squeue_errors_in_json_mean_unavailable_even_with_exit_0(fake_path) -> None:
    body = {
        "errors": [{"description": "Failed while looking for jobs", "source": "slurm_load_jobs"}],
        "jobs": [],
    }
    fake_tool(fake_path, "squeue", f"echo '{json.dumps(body)}'\n")
    with pytest.raises(BackendUnavailable, match="Failed while looking for jobs"):
        SlurmBackend().active()


def test_a_client_without_its_configuration_is_unavailable(fake_path) -> None:
    """Slurm's tools on a machine with no slurm.conf and no DNS record say so and exit 1:
    the site cannot answer now (its pages say why), not an unexpected error."""
    fake_tool(
        fake_path,
        "squeue",
        'echo "squeue: error: fetch_config: DNS SRV lookup failed" >&2\n'
        'echo "squeue: fatal: Could not establish a configuration source" >&2\nexit 1\n',
    )
    with pytest.raises(BackendUnavailable, match="configuration source"):
        SlurmBackend().active()


def test_a_tool_that_hangs_is_unavailable_after_the_timeout(fake_path) -> None:
    fake_tool(fake_path, "squeue", "sleep 5\n")
    with pytest.raises(BackendUnavailable, match="did not answer within 0.3 s"):
        SlurmBackend(timeout_s=0.3).active()


def test_squeue_json_is_read_into_backend_jobs(fake_path) -> None:
    jobs = [
        {
            "job_id": 7,
            "comment": "qc-7",
            "name": "a",
            "user_name": "ann",
            "cpus": 16,
            "job_state": "RUNNING",
            "time_limit": 2,
            "submit_time": 100,
            "start_time": 110,
            "end_time": 230,
        },
        {
            "job_id": 8,
            "comment": "",
            "name": "b",
            "user_name": "bob",
            "cpus": 4,
            "job_state": "PENDING",
            "time_limit": 1,
            "submit_time": 120,
            "start_time": 0,
            "end_time": 0,
        },
        {
            "job_id": 6,
            "comment": "",
            "name": "c",
            "user_name": "bob",
            "cpus": 4,
            "job_state": "COMPLETED",
            "time_limit": 1,
            "submit_time": 50,
            "start_time": 60,
            "end_time": 90,
        },
    ]
    fake_tool(fake_path, "squeue", f"echo '{json.dumps({'errors': [], 'jobs': jobs})}'\n")
    fake_tool(
        fake_path, "sacct", 'echo "sacct: error: accounting storage is disabled" >&2\nexit 1\n'
    )
    backend = SlurmBackend()
    active = backend.active()
    assert [(j.backend_id, j.state, j.procs, j.time_limit_s, j.start_ts) for j in active] == [
        ("7", "running", 16, 120.0, 110.0),
        ("8", "waiting", 4, 60.0, None),
    ]
    # No accounting: finished jobs come from the controller.
    assert [(j.backend_id, j.end_ts) for j in backend.finished_since(80)] == [("6", 90.0)]
    assert backend.find("qc-7", 0).backend_id == "7"


def test_sacct_json_gives_finished_jobs_with_their_tags(fake_path) -> None:
    jobs = [
        {
            "job_id": 5,
            "comment": {"job": "qc-5"},
            "name": "x",
            "user": "ann",
            "state": {"current": "COMPLETED"},
            "required": {"CPUs": 8},
            "time": {"submission": 10, "start": 20, "end": 50, "limit": 3},
        }
    ]
    fake_tool(fake_path, "sacct", f"echo '{json.dumps({'errors': [], 'jobs': jobs})}'\n")
    (job,) = SlurmBackend(accounting="sacct").finished_since(0)
    assert (job.tag, job.procs, job.start_ts, job.end_ts, job.time_limit_s) == (
        "qc-5",
        8,
        20.0,
        50.0,
        180.0,
    )


def test_scancel_failure_other_than_outage_is_a_backend_error(fake_path) -> None:
    fake_tool(fake_path, "scancel", 'echo "scancel: error: Invalid job id 99" >&2\nexit 1\n')
    with pytest.raises(BackendError, match="Invalid job id"):
        SlurmBackend().cancel("99")
