"""What an evaluation run reads: its trace (as stored, or with replayed waits) and its
runtime parameters. Shared by the run's own task and the workers answering its chunks
(``predictor.services.fanout``), which must rebuild exactly the same inputs."""

from __future__ import annotations

from typing import Any

from predictor.core.runtime.params import RuntimeParams
from predictor.models import EvaluationRun
from pyss_adapter.core.replay import with_simulated_waits
from traces.core.swf import SwfTrace, read_swf
from traces.services import swf_trace_for


def load_swf(run: EvaluationRun) -> SwfTrace:
    """The run's trace: a stored trace or a file; waits replayed when ``simulate_waits``."""
    swf = swf_trace_for(run.trace) if run.trace_id else read_swf(run.swf_path)
    return with_replayed_waits(swf) if run.params.get("simulate_waits") else swf


def with_replayed_waits(swf: SwfTrace) -> SwfTrace:
    """The same trace with waits from an EASY replay (for logs that carry none)."""
    procs = int(swf.machine_procs or 1)
    jobs = with_simulated_waits(swf.jobs, procs)
    return SwfTrace(header=swf.header, jobs=jobs, report=swf.report, name=swf.name)


def params_of(run_params: dict[str, Any]) -> RuntimeParams:
    """RuntimeParams from a run's ``params`` (only the known keys; the rest keep defaults)."""
    known = RuntimeParams().as_dict()
    return RuntimeParams(**{k: v for k, v in run_params.items() if k in known})
