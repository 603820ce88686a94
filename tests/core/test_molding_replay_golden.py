"""The replay's speed-ups change no decision: a synthetic log replayed under molding and
molding + delay gives, job by job, the size, release, start and runtime recorded with the code
before them (``tests/fixtures/molding_replay_golden.json``, made at main a10f43f: the demo
trace of 800 jobs on 64 processors, seed 3; ``downey``, sigma 1, guard 0, hold threshold 0.3).
Re-recorded once, when the replay took the live site's candidate rule (issue 19, one path:
``candidates.snapshot_sizes``, the sizes the user's jobs were submitted at, and the size grid
for a user with none; before, the sizes the user had asked for and no grid): 33 sizes of 800
changed under molding, 27 under delay; 19.6% of the jobs molded, 19% held under delay. Any
change of a decision moves one of these arrays, so the test fails on it. The replays here tell
the ``later`` headline (``rule_jobs=0``), the rule of the code that made the file: choosing the
rule at each fit (``jobmolding.core.headline``) is a change of decisions, not of speed, and is
tested in ``test_molding_replay_bundle.py``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from jobmolding.core.evaluate import prepare, run_strategy
from jobmolding.core.policy import MoldingParams
from jobmolding.core.replay_bundle import ReplayBundle
from pyss_adapter.core.demo import demo_trace

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "molding_replay_golden.json"


@pytest.fixture(scope="module")
def setup():
    swf = demo_trace(800, 64, seed=3)
    return prepare(swf.jobs, swf.machine_procs, 0.2, swf.header.max_runtime)


@pytest.mark.parametrize("strategy", ["molding", "delay"])
def test_replay_decides_job_by_job_as_the_code_before_the_speed_ups(setup, strategy):
    expected = json.loads(GOLDEN.read_text())[strategy]
    params = MoldingParams(
        strategy=strategy, runtime_model="downey", sigma=1.0, seed=0, guard=0.0, threshold=0.3
    )
    run = run_strategy(setup, params, lambda s: ReplayBundle(s.jobs.machine_procs, rule_jobs=0))
    out = run.outcome
    for name in ("procs", "release_s", "start_s", "runtime_s"):
        got = np.asarray(getattr(out, name), float)
        want = np.asarray(expected[name], float)
        differ = np.flatnonzero(got != want)
        assert differ.size == 0, f"{strategy}: {name} differs at jobs {differ[:10].tolist()}"
    assert (out.procs != out.original_procs).any()  # the replay molded something
    if strategy == "delay":
        assert (out.release_s > out.arrival_s).any()  # and held something


def test_delay_that_never_holds_replays_exactly_as_molding(setup):
    # the premise of evaluate.same_replay: with a hold threshold of 1 every decision is molding's
    runs = {}
    for strategy in ("molding", "delay"):
        params = MoldingParams(
            strategy=strategy, runtime_model="downey", sigma=1.0, guard=0.0, threshold=1.0
        )
        runs[strategy] = run_strategy(setup, params, lambda s: ReplayBundle(s.jobs.machine_procs))
    a, b = runs["molding"].outcome, runs["delay"].outcome
    for name in ("procs", "release_s", "start_s", "runtime_s"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert runs["molding"].decisions == runs["delay"].decisions


def test_evaluate_replays_delay_again_only_when_it_can_hold():
    from jobmolding.core.evaluate import same_replay

    mold = MoldingParams(strategy="molding", runtime_model="downey", guard=0.25)
    used = {"molding": mold}
    never = MoldingParams(strategy="delay", runtime_model="downey", guard=0.25, threshold=1.0)
    holds = MoldingParams(strategy="delay", runtime_model="downey", guard=0.25, threshold=0.5)
    other_guard = MoldingParams(strategy="delay", runtime_model="downey", guard=0.1, threshold=1.0)
    assert same_replay(never, used) == "molding"
    assert same_replay(holds, used) is None
    assert same_replay(other_guard, used) is None
    assert same_replay(never, {}) is None
