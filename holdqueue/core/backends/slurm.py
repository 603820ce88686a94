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
within ``timeout_s``. For ``sbatch`` the last one is different: the controller may have taken
the job before the answer was lost, so a timeout, a cut-off answer or a missing job id is a
:class:`SubmissionUncertain` and the job is looked up by its tag before anything else.

Nothing of the service reaches a job. The tools run with a minimal environment (``PATH``,
``SLURM_CONF``, ``TZ``, ``LC_ALL=C`` and the names a site lists in ``export_env``), and
``sbatch`` gets ``--export=NONE`` (or exactly those names), so neither the service's secrets
nor an ``SBATCH_*`` variable can reach or reshape a job. ``--ignore-pbs`` stops ``#PBS`` and
``#BSUB`` lines being read as options, and ``#SBATCH`` lines outside the site's
``allowed_directives`` are turned into comments (``holdqueue.core.directives``; the API
already refuses them with the line named). With ``submit_as_owner`` the job runs as the
cluster account the site's table maps its owner to (``JobSpec.run_as``), never a raw name.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Sequence
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
    SubmissionUncertain,
)
from holdqueue.core.directives import neutralise

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
    "could not establish a configuration source",  # no slurm.conf and no DNS SRV record
)
# sbatch errors after which the controller may hold the job all the same.
_UNCERTAIN_HINTS = (
    "socket timed out",
    "zero bytes were transmitted",
    "connection reset",
    "broken pipe",
)
_GONE_HINTS = ("already completing or completed", "invalid job id specified")
_JOB_ID = re.compile(r"^(\d+)(;\S+)?$")
# A POSIX account name (never a number, so never a uid such as 0), and never root.
ACCOUNT = re.compile(r"^[a-z_][a-z0-9_.-]{0,31}$")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"


def account_problem(account: str) -> str | None:
    """Why ``account`` cannot be passed to ``sbatch --uid``, or None."""
    if not ACCOUNT.match(account or ""):
        return f"{account!r} is not a cluster account name (letters, digits, _ . -; not a number)"
    if account == "root":
        return "jobs never run as root"
    return None


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
    export_env : names of the service's environment variables a job receives ('' = none).
    allowed_directives : ``#SBATCH`` options a job script may set (the rest are neutralised).
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
        export_env: Sequence[str] = (),
        allowed_directives: Sequence[str] = (),
    ) -> None:
        if accounting not in ("auto", "sacct", "controller"):
            raise ValueError(f"accounting must be auto, sacct or controller, got {accounting!r}")
        bad = [n for n in export_env if not ENV_NAME.match(n)]
        if bad:
            raise ValueError(f"export_env holds names that are not variable names: {bad}")
        self.partition = partition
        self.slurm_conf = slurm_conf
        self.timeout_s = float(timeout_s)
        self.workdir = workdir or tempfile.gettempdir()
        self.submit_as_owner = submit_as_owner
        self.accounting = accounting
        self.export_env = tuple(export_env)
        self.allowed_directives = tuple(allowed_directives)

    # --- running the tools --------------------------------------------------------------
    def _env(self) -> dict[str, str]:
        """What the client tools see: no secret of the service (see the module docstring)."""
        env = {"PATH": os.environ.get("PATH") or DEFAULT_PATH, "LC_ALL": "C"}
        conf = self.slurm_conf or os.environ.get("SLURM_CONF", "")
        if conf:
            env["SLURM_CONF"] = conf
        for name in ("TZ", *self.export_env):
            if name in os.environ:
                env[name] = os.environ[name]
        return env

    def _run(self, args: list[str], *, submitting: bool = False) -> str:
        """Run one tool; a submission whose fate is unknown is :class:`SubmissionUncertain`."""
        unsure = SubmissionUncertain if submitting else BackendUnavailable
        try:
            done = subprocess.run(
                args,
                capture_output=True,
                text=True,
                timeout=self.timeout_s,
                env=self._env(),
                check=False,
            )
        except FileNotFoundError as exc:
            raise BackendUnavailable(f"{args[0]} is not installed on this machine") from exc
        except subprocess.TimeoutExpired as exc:
            raise unsure(
                f"{args[0]} did not answer within {self.timeout_s:g} s (is slurmctld up?)"
            ) from exc
        if done.returncode != 0:
            message = (done.stderr or done.stdout).strip() or f"{args[0]} exited {done.returncode}"
            lowered = message.lower()
            if done.returncode < 0 or any(h in lowered for h in _UNCERTAIN_HINTS):
                raise unsure(message)
            if any(h in lowered for h in _UNAVAILABLE_HINTS):
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
    def submit_args(self, spec: JobSpec) -> list[str]:
        """``sbatch``'s options: Queuecast's own, all on the command line (they win)."""
        args = [
            "sbatch",
            "--parsable",
            "--ignore-pbs",
            f"--export={','.join(self.export_env) or 'NONE'}",
            f"--job-name={spec.name or spec.tag}",
            f"--ntasks={int(spec.procs)}",
            f"--time={_time_limit(spec.time_limit_s)}",
            f"--comment={spec.tag}",
            f"--chdir={self.workdir}",
        ]
        if self.partition:
            args.append(f"--partition={self.partition}")
        if self.submit_as_owner:
            problem = account_problem(spec.run_as)
            if problem:
                raise SubmissionRejected(f"submit_as_owner: {problem}")
            args.append(f"--uid={spec.run_as}")
        return args

    def submit(self, spec: JobSpec) -> str:
        args = self.submit_args(spec)
        with tempfile.NamedTemporaryFile("w", suffix=".sh", prefix="queuecast-") as script:
            script.write(neutralise(spec.script, self.allowed_directives))
            script.flush()
            try:
                out = self._run([*args, script.name], submitting=True)
            except BackendUnavailable:
                raise
            except BackendError as exc:
                raise SubmissionRejected(str(exc)) from exc
        # --parsable prints "jobid" or "jobid;cluster"; anything else leaves the job in doubt.
        match = _JOB_ID.match(out.strip())
        if match is None:
            raise SubmissionUncertain(f"sbatch printed no job id: {out.strip()[:200]!r}")
        return match.group(1)

    def cancel(self, backend_id: str) -> None:
        try:
            self._run(["scancel", str(backend_id)])
        except BackendUnavailable:
            raise
        except BackendError as exc:
            # Older Slurm exits 1 for a job that has ended or been purged: it is gone.
            if any(h in str(exc).lower() for h in _GONE_HINTS):
                return
            raise

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
