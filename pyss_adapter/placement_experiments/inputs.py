"""What the placement experiments share: the logs they replay, one usage model per
schedule, and the paths of the traces directory."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings

from pyss_adapter.core.jobs import sim_jobs
from pyss_adapter.core.placement import make_placement
from pyss_adapter.core.placement.base import resolve_cores_per_node
from pyss_adapter.core.placement.usage import usage_for_jobs
from pyss_adapter.core.replay import replay_jobs
from traces.services import resolve_trace

DEFAULT_TRACES = ["CTC-SP2-1996-3.1-cln", "SDSC-SP2-1998-4.2-cln", "HPC2N-2002-2.2-cln"]


class Inputs:
    """Loads logs and replays them under a placement; ``write`` shows progress."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self.write = write
        self.cores: tuple[int, str] = (8, "virtual")
        self._usage: dict[tuple, Any] = {}

    def load(self, opts: dict[str, Any], name: str, k: float = 1.0):
        path = swf_path(name)
        swf = resolve_trace(None, path) if path else resolve_trace(name, None)
        frame = swf.jobs.iloc[: opts["jobs"]] if opts["jobs"] else swf.jobs
        procs = int(swf.machine_procs)
        header = swf.header
        self.cores = resolve_cores_per_node(None, header.max_procs, header.max_nodes)
        if k != 1.0:
            c = self.cores[0]
            procs = math.ceil(k * procs / c) * c
        return swf.name, sim_jobs(frame, procs), swf

    def run(self, jobs, name: str, model: str = "constant", seed: int = 0, **opt: Any):
        corr = opt.pop("corr", "rank")
        key = (id(jobs), model, seed, corr)
        if key not in self._usage:  # one usage per schedule: its draws are drawn once
            self._usage = {key: usage_for_jobs(jobs, model=model, seed=seed, corr=corr)}
            self._usage[key].memo = {}
        usage = self._usage[key]
        p = make_placement(name, **opt)
        self.write(f"  {name} {opt or ''}")
        result = replay_jobs(jobs, placement=p, usage=usage, cores_per_node=self.cores)
        return result, result.placement["metrics"]


def scale(opts: dict[str, Any]) -> str:
    return f"first {opts['jobs']} jobs" if opts["jobs"] else "whole logs"


def label(pol: str, opt: dict[str, Any]) -> str:
    return pol + "".join(f" {k}={v}" for k, v in opt.items())


def _traces_dir() -> Path | None:
    folder = getattr(settings, "QUEUECAST_TRACES_DIR", None) or os.environ.get(
        "QUEUECAST_TRACES_DIR"
    )
    return Path(folder) if folder else None


def swf_path(name: str) -> str | None:
    """A file path, or a file of QUEUECAST_TRACES_DIR (``.swf.gz`` optional); else None."""
    if Path(name).is_file():
        return name
    folder = _traces_dir()
    for candidate in (name, f"{name}.swf.gz", f"{name}.swf"):
        if folder and (folder / candidate).is_file():
            return str(folder / candidate)
    return None


def usage_path() -> str | None:
    folder = _traces_dir()
    path = folder / "usage" / "azure-vm-cpu-100.csv.gz" if folder else None
    return str(path) if path and path.is_file() else None
