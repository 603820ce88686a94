"""Slurm through its command-line tools: ``sbatch --parsable``, ``squeue --json``,
``scancel`` and ``sacct --json`` (Slurm 22.05's JSON, OpenAPI plugin v0.0.38).

No shell is involved anywhere: every command is an argument list, and the job script is
written to a private temporary file that ``sbatch`` reads (so nothing in it is ever
interpreted by a shell on Queuecast's side). Each job is tagged with ``--comment`` (Queuecast's
id) so :meth:`Backend.find` can reconcile a submission whose id was never recorded.

Finished jobs come from ``sacct --json`` when the cluster keeps accounting (slurmdbd);
otherwise from what the controller still reports (``squeue --json --states=all`` lists a
finished job for ``MinJobAge`` seconds after it ends).

A controller that is down shows up three ways, all mapped to :class:`BackendUnavailable`: a
non-zero exit saying it cannot contact the controller (``sbatch``, ``scancel``), a JSON
answer whose ``errors`` list is not empty (``squeue --json`` exits 0 then), or no answer
within ``timeout_s``.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from typing import Any

from holdqueue.core.backends.base import (
    FINISHED,
    RUNNING,
    WAITING,
    Backend,
    BackendError,
    BackendJob,
    BackendUnavailable,
    JobSpec,
    SubmissionRejected,
)

_RUNNING_STATES = {"RUNNING", "COMPLETING", "SUSPENDED", "CONFIGURING", "STOPPED"}
_WAITING_STATES = {"PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD"}
_UNAVAILABLE_HINTS = (
    "unable to contact slurm controller",
    "connection refused",
    "connect failure",
    "socket timed out",
    "slurm_load_jobs",
    "munge",
    "slurmdbd",
)


def _time_limit(seconds: int) -> str:
    """``--time`` as ``H:MM:SS`` (Slurm rounds up to whole minutes)."""
    s = int(seconds)
    return f"{s // 3600}:{(s % 3600) // 60:02d}:{s % 60:02d}"


def _ts(value: Any) -> float | None:
    """A Slurm epoch field (0 or absent means "not yet")."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if v > 0 else None


def _limit_s(minutes: Any) -> float:
    """Slurm's ``time_limit`` (minutes; a number, or absent/infinite) in seconds."""
    try:
        return float(minutes) * 60.0
    except (TypeError, ValueError):
        return float("inf")


class SlurmBackend(Backend):
    """A Slurm cluster reached with its client tools on this machine.

    Parameters
    ----------
    partition : the partition jobs go to ('' = the cluster's default).
    slurm_conf : path of slurm.conf for the client tools ('' = the system's).
    timeout_s : seconds before a command counts as "the controller does not answer".
    workdir : the jobs' working directory and where ``slurm-%j.out`` files go.
    submit_as_owner : pass ``--uid=<owner>`` so the job runs as its owner (Queuecast must
        then run as root or SlurmUser); off: jobs run as Queuecast's own account.
    accounting : ``auto`` (use sacct when it answers), ``sacct`` or ``controller``.
    """

    name = "slurm"

    def __init__(
        self,
        partition: str = "",
        slurm_conf: str = "",
        timeout_s: float = 20.0,
        workdir: str = "",
        submit_as_owner: bool = False,
        accounting: str = "auto",
    ) -> None:
        if accounting not in ("auto", "sacct", "controller"):
            raise ValueError(f"accounting must be auto, sacct or controller, got {accounting!r}")
        self.partition = partition
        self.slurm_conf = slurm_conf
        self.timeout_s = float(timeout_s)
        self.workdir = workdir or tempfile.gettempdir()
        self.submit_as_owner = submit_as_owner
        self.accounting = accounting

    # --- running the tools --------------------------------------------------------------
    def _run(self, args: list[str]) -> str:
        env = dict(os.environ)
        if self.slurm_conf:
            env["SLURM_CONF"] = self.slurm_conf
        try:
            done = subprocess.run(
                args, capture_output=True, text=True, timeout=self.timeout_s, env=env, check=False
            )
        except FileNotFoundError as exc:
            raise BackendUnavailable(f"{args[0]} is not installed on this machine") from exc
        except subprocess.TimeoutExpired as exc:
            raise BackendUnavailable(
                f"{args[0]} did not answer within {self.timeout_s:g} s (is slurmctld up?)"
            ) from exc
        if done.returncode != 0:
            message = (done.stderr or done.stdout).strip() or f"{args[0]} exited {done.returncode}"
            if any(h in message.lower() for h in _UNAVAILABLE_HINTS):
                raise BackendUnavailable(message)
            raise BackendError(message)
        return done.stdout

    def _json(self, args: list[str]) -> dict[str, Any]:
        out = self._run(args)
        try:
            data = json.loads(out)
        except json.JSONDecodeError as exc:
            raise BackendError(f"{args[0]} gave no JSON: {out[:200]!r}") from exc
        errors = data.get("errors") or []
        if errors:
            first = errors[0]
            text = first.get("description") or first.get("error") or str(first)
            raise BackendUnavailable(f"{args[0]}: {text} ({first.get('source', '')})".strip())
        return data

    # --- the contract -------------------------------------------------------------------
    def submit(self, spec: JobSpec) -> str:
        args = [
            "sbatch",
            "--parsable",
            f"--job-name={spec.name or spec.tag}",
            f"--ntasks={int(spec.procs)}",
            f"--time={_time_limit(spec.time_limit_s)}",
            f"--comment={spec.tag}",
            f"--chdir={self.workdir}",
        ]
        if self.partition:
            args.append(f"--partition={self.partition}")
        if self.submit_as_owner and spec.user:
            args.append(f"--uid={spec.user}")
        with tempfile.NamedTemporaryFile("w", suffix=".sh", prefix="queuecast-") as script:
            script.write(spec.script)
            script.flush()
            try:
                out = self._run([*args, script.name])
            except BackendUnavailable:
                raise
            except BackendError as exc:
                raise SubmissionRejected(str(exc)) from exc
        # --parsable prints "jobid" or "jobid;cluster".
        return out.strip().split(";")[0]

    def cancel(self, backend_id: str) -> None:
        self._run(["scancel", str(backend_id)])

    def _squeue(self, *extra: str) -> list[BackendJob]:
        args = ["squeue", "--json", *extra]
        if self.partition:
            args.append(f"--partition={self.partition}")
        return [self._from_squeue(j) for j in self._json(args).get("jobs", [])]

    def active(self) -> list[BackendJob]:
        return [j for j in self._squeue() if j.state != FINISHED]

    def finished_since(self, since_ts: float) -> list[BackendJob]:
        if self.accounting != "controller":
            try:
                return self._finished_from_sacct(since_ts)
            except BackendError:
                if self.accounting == "sacct":
                    raise
        jobs = self._squeue("--states=all")
        return [j for j in jobs if j.state == FINISHED and (j.end_ts or 0.0) >= since_ts]

    # --- reading Slurm's JSON -----------------------------------------------------------
    def _finished_from_sacct(self, since_ts: float) -> list[BackendJob]:
        start = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(since_ts))
        args = ["sacct", "--json", "--allusers", "-X", f"--starttime={start}"]
        if self.partition:
            args.append(f"--partition={self.partition}")
        data = self._json(args)
        jobs = (self._from_sacct(j) for j in data.get("jobs", []))
        return [j for j in jobs if j.state == FINISHED and (j.end_ts or 0.0) >= since_ts]

    @staticmethod
    def _from_squeue(j: dict[str, Any]) -> BackendJob:
        state = str(j.get("job_state", ""))
        return BackendJob(
            backend_id=str(j["job_id"]),
            tag=str(j.get("comment") or ""),
            name=str(j.get("name") or ""),
            user=str(j.get("user_name") or ""),
            procs=int(j.get("cpus") or j.get("tasks") or 0),
            time_limit_s=_limit_s(j.get("time_limit")),
            state=_state(state),
            outcome=state,
            submit_ts=_ts(j.get("submit_time")) or 0.0,
            start_ts=_ts(j.get("start_time")) if _state(state) != WAITING else None,
            end_ts=_ts(j.get("end_time")) if _state(state) == FINISHED else None,
        )

    @staticmethod
    def _from_sacct(j: dict[str, Any]) -> BackendJob:
        state = str((j.get("state") or {}).get("current", ""))
        times = j.get("time") or {}
        comment = j.get("comment") or {}
        tag = comment.get("job") if isinstance(comment, dict) else comment
        return BackendJob(
            backend_id=str(j["job_id"]),
            tag=str(tag or ""),
            name=str(j.get("name") or ""),
            user=str(j.get("user") or ""),
            procs=int((j.get("required") or {}).get("CPUs") or 0),
            time_limit_s=_limit_s(times.get("limit")),
            state=_state(state),
            outcome=state,
            submit_ts=_ts(times.get("submission")) or 0.0,
            start_ts=_ts(times.get("start")),
            end_ts=_ts(times.get("end")) if _state(state) == FINISHED else None,
        )


def _state(slurm_state: str) -> str:
    if slurm_state in _RUNNING_STATES:
        return RUNNING
    if slurm_state in _WAITING_STATES:
        return WAITING
    return FINISHED
