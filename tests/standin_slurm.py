"""Stand-in ``sbatch``/``squeue``/``sacct``/``scancel`` for the live-site safety tests (no
tests here).

Each tool is a small Python script put first on ``PATH``. It records every call (arguments,
environment, the script ``sbatch`` was given) as JSON in the state folder and behaves as the
folder's mode files say, so a test can make the batch system slow, cut off or down:

- ``sbatch.mode``: ``ok`` (accept, print the id), ``accept-then-hang`` (accept, never
  answer: the caller times out), ``hang`` (never answer, nothing accepted), ``cut-off``
  (accept, then "Socket timed out on send/recv operation"), ``down`` (connect failure,
  nothing accepted), ``refuse`` (invalid partition).
- ``squeue.mode``: ``ok`` (the accepted jobs, every one PENDING) or ``down``.
- ``scancel.mode``: ``ok`` or ``denied``.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

HEADER = f"#!{sys.executable}\n"
COMMON = """
import json, os, sys, time, pathlib
state = pathlib.Path({state!r})
def mode(tool):
    f = state / (tool + ".mode")
    return f.read_text().strip() if f.exists() else "ok"
def record(tool, **extra):
    n = len(list(state.glob(tool + "-*.json")))
    body = {{"args": sys.argv[1:], "env": dict(os.environ), **extra}}
    (state / f"{{tool}}-{{n:03d}}.json").write_text(json.dumps(body))
def jobs():
    f = state / "jobs.json"
    return json.loads(f.read_text()) if f.exists() else []
"""
SBATCH = """
args = sys.argv[1:]
record("sbatch", script=pathlib.Path(args[-1]).read_text())
opt = dict(a[2:].split("=", 1) for a in args if a.startswith("--") and "=" in a)
def accept():
    known = jobs()
    job_id = 1000 + len(known)
    known.append({{"job_id": job_id, "comment": opt["comment"], "name": opt.get("job-name", ""),
                  "user_name": "queuecast", "cpus": int(opt["ntasks"]), "job_state": "PENDING",
                  "time_limit": 2, "submit_time": int(time.time()), "start_time": 0,
                  "end_time": 0}})
    (state / "jobs.json").write_text(json.dumps(known))
    return job_id
m = mode("sbatch")
if m == "ok":
    print(accept())
elif m == "accept-then-hang":
    accept(); time.sleep(60)
elif m == "hang":
    time.sleep(60)
elif m == "cut-off":
    accept()
    sys.exit("sbatch: error: Batch job submission failed: Socket timed out on send/recv operation")
elif m == "down":
    sys.exit("sbatch: error: Batch job submission failed: Unable to contact slurm controller "
             "(connect failure)")
elif m == "refuse":
    sys.exit("sbatch: error: Batch job submission failed: Invalid partition name specified")
"""
SQUEUE = """
record("squeue")
if mode("squeue") == "down":
    sys.exit("slurm_load_jobs error: Unable to contact slurm controller (connect failure)")
print(json.dumps({{"errors": [], "jobs": jobs()}}))
"""
SACCT = """
record("sacct")
sys.exit("sacct: error: Slurm accounting storage is disabled")
"""
SCANCEL = """
record("scancel")
if mode("scancel") == "denied":
    sys.exit("scancel: error: Kill job error on job id " + sys.argv[-1]
             + ": Access/permission denied")
"""


class StandIn:
    """The stand-in tools in ``folder`` (see the module docstring)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.state = folder / "state"
        self.state.mkdir(parents=True, exist_ok=True)
        for name, body in (
            ("sbatch", SBATCH),
            ("squeue", SQUEUE),
            ("sacct", SACCT),
            ("scancel", SCANCEL),
        ):
            path = folder / name
            path.write_text(HEADER + COMMON.format(state=str(self.state)) + body.format())
            path.chmod(path.stat().st_mode | stat.S_IEXEC)

    def on_path(self, monkeypatch) -> StandIn:
        monkeypatch.setenv("PATH", f"{self.folder}{os.pathsep}{os.environ['PATH']}")
        return self

    def mode(self, tool: str, mode: str) -> None:
        (self.state / f"{tool}.mode").write_text(mode)

    def calls(self, tool: str) -> list[dict]:
        return [json.loads(p.read_text()) for p in sorted(self.state.glob(f"{tool}-*.json"))]

    def jobs(self) -> list[dict]:
        path = self.state / "jobs.json"
        return json.loads(path.read_text()) if path.exists() else []

    def tagged(self, tag: str) -> list[dict]:
        return [j for j in self.jobs() if j["comment"] == tag]

    def set_jobs(self, jobs: list[dict]) -> None:
        (self.state / "jobs.json").write_text(json.dumps(jobs))
