"""The Slurm backend against stand-in tools that log their arguments and environment: no
secret or stray option reaches a job, an ambiguous sbatch is "uncertain" (not "not
submitted"), owners run as mapped accounts only, and a job already gone cancels quietly."""

from __future__ import annotations

import pytest

from holdqueue.core.backends.base import (
    BackendError,
    BackendUnavailable,
    JobSpec,
    SubmissionRejected,
    SubmissionUncertain,
)
from holdqueue.core.backends.slurm import SlurmBackend, account_problem
from tests.standin_slurm import StandIn

SECRETS = {
    "QUEUECAST_SECRET_KEY": "k" * 60,
    "DATABASE_URL": "postgres://queuecast:pw@db/queuecast",
    "CELERY_BROKER_URL": "redis://redis:6379/0",
    "SBATCH_ARRAY_INX": "0-999",  # would make sbatch submit an array
}


@pytest.fixture
def slurm(tmp_path, monkeypatch) -> StandIn:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    return StandIn(tmp_path / "bin").on_path(monkeypatch)


def spec(tag: str = "queuecast-t1", script: str = "#!/bin/sh\nsleep 1\n", **extra) -> JobSpec:
    return JobSpec(tag=tag, name="n", procs=2, time_limit_s=60, script=script, **extra)


def test_sbatch_gets_no_secret_and_jobs_get_export_none(slurm) -> None:
    SlurmBackend(timeout_s=5).submit(spec())
    (call,) = slurm.calls("sbatch")
    assert not set(SECRETS) & set(call["env"]), sorted(call["env"])
    assert set(call["env"]) <= {"PATH", "LC_ALL", "SLURM_CONF", "TZ"}
    assert "--export=NONE" in call["args"] and "--ignore-pbs" in call["args"]


def test_a_site_allow_list_exports_exactly_those_names(slurm, monkeypatch) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    SlurmBackend(timeout_s=5, export_env=["OMP_NUM_THREADS"]).submit(spec())
    (call,) = slurm.calls("sbatch")
    assert "--export=OMP_NUM_THREADS" in call["args"]
    assert call["env"]["OMP_NUM_THREADS"] == "1" and "DATABASE_URL" not in call["env"]
    with pytest.raises(ValueError, match="not variable names"):
        SlurmBackend(export_env=["A=B"])


def test_every_tool_runs_without_the_services_environment(slurm) -> None:
    backend = SlurmBackend(timeout_s=5)
    backend.active()
    backend.finished_since(0)
    backend.cancel("1000")
    for tool in ("squeue", "sacct", "scancel"):
        for call in slurm.calls(tool):
            assert not set(SECRETS) & set(call["env"]), (tool, sorted(call["env"]))


def test_directives_the_site_does_not_allow_never_reach_sbatch(slurm) -> None:
    script = "#!/bin/sh\n#SBATCH --array=0-999\n#SBATCH --mail-type=END\n#PBS -t 0-9\nrun\n"
    SlurmBackend(timeout_s=5, allowed_directives=["--mail-type"]).submit(spec(script=script))
    (call,) = slurm.calls("sbatch")
    kept = call["script"].splitlines()[1:3]
    assert kept == ["# #SBATCH --array=0-999", "#SBATCH --mail-type=END"]
    assert "--ignore-pbs" in call["args"]  # so #PBS -t (an array) is not read either


@pytest.mark.parametrize("mode", ["accept-then-hang", "hang", "cut-off"])
def test_an_sbatch_that_times_out_or_is_cut_off_is_uncertain_not_down(slurm, mode) -> None:
    slurm.mode("sbatch", mode)
    with pytest.raises(SubmissionUncertain):
        SlurmBackend(timeout_s=1).submit(spec())


def test_a_controller_that_refuses_the_connection_is_down_and_certain(slurm) -> None:
    slurm.mode("sbatch", "down")
    with pytest.raises(BackendUnavailable) as caught:
        SlurmBackend(timeout_s=5).submit(spec())
    assert not isinstance(caught.value, SubmissionUncertain)
    slurm.mode("sbatch", "refuse")
    with pytest.raises(SubmissionRejected, match="Invalid partition"):
        SlurmBackend(timeout_s=5).submit(spec())


def test_an_answer_without_a_job_id_is_uncertain(fake_sbatch) -> None:
    with pytest.raises(SubmissionUncertain, match="no job id"):
        SlurmBackend(timeout_s=5).submit(spec())


@pytest.fixture
def fake_sbatch(tmp_path, monkeypatch):
    path = tmp_path / "sbatch"
    path.write_text("#!/bin/sh\necho 'sbatch: warning: something odd'\n")
    path.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")


def test_a_job_submitted_before_the_answer_was_lost_is_found_by_its_tag(slurm) -> None:
    slurm.mode("sbatch", "accept-then-hang")
    backend = SlurmBackend(timeout_s=1)
    with pytest.raises(SubmissionUncertain):
        backend.submit(spec(tag="queuecast-lost"))
    assert backend.find("queuecast-lost", 0).backend_id == "1000"


@pytest.mark.parametrize("account", ["0", "root", "", "1000", "a b", "-u0", "Alice"])
def test_submit_as_owner_never_passes_a_number_root_or_a_raw_name(slurm, account) -> None:
    with pytest.raises(SubmissionRejected, match="submit_as_owner"):
        SlurmBackend(timeout_s=5, submit_as_owner=True).submit(spec(run_as=account))
    assert slurm.calls("sbatch") == []
    assert account_problem(account)


def test_submit_as_owner_passes_the_mapped_account(slurm) -> None:
    SlurmBackend(timeout_s=5, submit_as_owner=True).submit(spec(run_as="alice", user="0"))
    (call,) = slurm.calls("sbatch")
    assert "--uid=alice" in call["args"] and not any(a == "--uid=0" for a in call["args"])


def test_without_submit_as_owner_no_uid_is_passed(slurm) -> None:
    SlurmBackend(timeout_s=5).submit(spec(run_as="alice", user="0"))
    assert not any(a.startswith("--uid") for a in slurm.calls("sbatch")[0]["args"])


def test_a_job_already_gone_cancels_quietly_and_a_refusal_is_an_error(tmp_path, monkeypatch):
    path = tmp_path / "scancel"
    path.write_text(
        "#!/bin/sh\necho 'scancel: error: Kill job error on job id 9: "
        "Job/step already completing or completed' >&2\nexit 1\n"
    )
    path.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    SlurmBackend(timeout_s=5).cancel("9")
    path.write_text("#!/bin/sh\necho 'scancel: error: Access/permission denied' >&2\nexit 1\n")
    with pytest.raises(BackendError, match="permission denied"):
        SlurmBackend(timeout_s=5).cancel("9")
