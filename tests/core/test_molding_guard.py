"""The never-hurts guard: how it overrides a decision, and how it is chosen on the tuning
part only (``jobmolding.core.arrival.guarded``, ``jobmolding.core.guard``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jobmolding.core.arrival import ArrivalRules, Candidates, decide_arrival, guarded, within_work
from jobmolding.core.candidates import speedup_candidates
from jobmolding.core.choice import choose_size
from jobmolding.core.future import predicted_ends
from jobmolding.core.guard import GUARDS, choose_guard, choose_hold, tuning_setup
from jobmolding.core.policy import MoldingParams
from predictor.core.runtime.rangeset import RangeSet
from predictor.core.state.request import JobRequest, RequestBatch
from predictor.core.state.snapshot import ActiveJobs, Snapshot
from tests.core.test_molding_policy import WARMUP, setup_for


def point(v: float) -> RangeSet:
    return RangeSet(np.array([v]), np.array([v]), np.array([1.0]))


def test_a_molded_size_is_kept_only_when_its_predicted_gain_beats_the_guard() -> None:
    # original 8: response 1000; size 4: response 800 (a 20% gain)
    d = choose_size(8, [4, 8], [0.0, 900.0], [point(800.0), point(100.0)])
    assert d.chosen_procs == 4
    assert guarded(d, 0.1).chosen_procs == 4  # 800 < 0.9 x 1000
    kept = guarded(d, 0.25)  # 800 is not < 0.75 x 1000
    assert kept.chosen_procs == 8 and kept.reason.startswith("guard: size 4 gains 20%")
    assert guarded(d, 1.0).chosen_procs == 8


def test_a_guard_above_the_threshold_raises_the_bar_of_a_hold() -> None:
    assert ArrivalRules(guard=0.5).delay_threshold == 0.5
    assert ArrivalRules(guard=0.1).delay_threshold == 0.3
    with pytest.raises(ValueError, match="guard"):
        ArrivalRules(guard=1.5)


def test_the_guard_is_the_best_never_worse_one_on_the_tuning_part_only() -> None:
    setup = setup_for([*WARMUP, *[(2000 + k, 100, 4, 150, 1) for k in range(7)]], warmup=6)
    seen = []
    # guard 0 is better on response but worse on slowdown; 0.25 better on both; 0.5 worse
    figures = {
        "baseline": (100.0, 5.0), 0.0: (50.0, 6.0), 0.1: (90.0, 5.0), 0.25: (80.0, 4.0),
        0.5: (120.0, 5.0),
    }  # fmt: skip

    def run(s, p):
        seen.append((len(s.jobs), s.n_warmup, p.strategy, p.guard))
        r, b = figures["baseline" if p.strategy == "baseline" else p.guard]
        return {"mean_response_s": r, "mean_bounded_slowdown": b}

    choice = choose_guard(setup, MoldingParams(strategy="delay"), run)
    assert choice.guard == 0.25
    assert [t["never_worse"] for t in choice.tried] == [False, True, True, False, True]
    # every replay is of the 6 tuning jobs, acting on their second half
    assert {(n, w) for n, w, _, _ in seen} == {(6, 3)}
    assert [g for _, _, s, g in seen if s == "delay"] == [g for g in GUARDS if g < 1.0]


def test_the_tuning_setup_is_the_warm_up_part_cut_out() -> None:
    setup = setup_for([*WARMUP, *[(2000 + k, 100, 4, 150, 1) for k in range(7)]], warmup=6)
    tune = tuning_setup(setup)
    assert len(tune.jobs) == 6 and len(tune.requests) == 6 and len(tune.frame) == 6
    assert tune.jobs.submit_s.tolist() == setup.jobs.submit_s[:6].tolist()


def test_holds_are_kept_only_where_they_beat_molding_alone_on_the_tuning_part() -> None:
    setup = setup_for([*WARMUP, *[(2000 + k, 100, 4, 150, 1) for k in range(7)]], warmup=6)
    molding = {"mean_response_s": 80.0, "mean_bounded_slowdown": 4.0}
    # 0.3 holds too often (worse than molding alone), 0.5 helps, 0.7 helps less
    figures = {0.3: (90.0, 4.0), 0.5: (70.0, 3.9), 0.7: (75.0, 4.0)}
    seen = []

    def run(s, p):
        seen.append((p.strategy, p.guard, p.threshold))
        r, b = figures[p.threshold]
        return {"mean_response_s": r, "mean_bounded_slowdown": b}

    params = MoldingParams(strategy="delay", guard=0.25)
    hold = choose_hold(setup, params, run, molding)
    assert hold["threshold"] == 0.5
    assert [t["never_worse_than_molding"] for t in hold["tried"]] == [False, True, True, True]
    assert seen == [("delay", 0.25, 0.3), ("delay", 0.25, 0.5), ("delay", 0.25, 0.7)]
    # nothing beats molding alone: no holds (threshold 1)
    figures.update({0.5: (81.0, 3.0), 0.7: (80.0, 4.1)})
    assert choose_hold(setup, params, run, molding)["threshold"] == 1.0


def test_a_hold_threshold_that_only_ties_molding_alone_is_not_kept() -> None:
    """A threshold under which the tuning part held nothing replays molding alone: the same
    figures are no evidence that its holds help, so the tie goes to 1 (never hold), and a
    real gain still wins."""
    setup = setup_for([*WARMUP, *[(2000 + k, 100, 4, 150, 1) for k in range(7)]], warmup=6)
    molding = {"mean_response_s": 80.0, "mean_bounded_slowdown": 4.0}
    figures = {0.3: (90.0, 4.0), 0.5: (85.0, 4.0), 0.7: (80.0, 4.0)}  # 0.7 held nothing

    def run(s, p):
        r, b = figures[p.threshold]
        return {"mean_response_s": r, "mean_bounded_slowdown": b}

    params = MoldingParams(strategy="delay", guard=0.25)
    hold = choose_hold(setup, params, run, molding)
    assert [t["never_worse_than_molding"] for t in hold["tried"]] == [False, False, True, True]
    assert hold["threshold"] == 1.0
    figures[0.5] = (79.0, 4.0)
    assert choose_hold(setup, params, run, molding)["threshold"] == 0.5


def test_a_hold_that_wins_on_one_half_of_the_tuning_part_and_loses_on_the_other_is_not_kept():
    setup = setup_for([*WARMUP, *[(2000 + k, 100, 4, 150, 1) for k in range(7)]], warmup=6)

    def figs(r1: float, b1: float, r2: float, b2: float) -> dict:
        halves = [
            {"mean_response_s": r1, "mean_bounded_slowdown": b1},
            {"mean_response_s": r2, "mean_bounded_slowdown": b2},
        ]
        return {"mean_response_s": (r1 + r2) / 2, "mean_bounded_slowdown": (b1 + b2) / 2,
                "halves": halves}  # fmt: skip

    molding = figs(80.0, 4.0, 80.0, 4.0)
    # 0.3 wins overall (70 s) through its first half only (its second: 82 s > 80);
    # 0.5 wins less (78 s) but on both halves; 0.7's bounded slowdown is worse on one half
    figures = {
        0.3: figs(58.0, 3.0, 82.0, 3.9),
        0.5: figs(77.0, 3.9, 79.0, 4.0),
        0.7: figs(70.0, 4.2, 70.0, 3.0),
    }
    params = MoldingParams(strategy="delay", guard=0.25)
    hold = choose_hold(setup, params, lambda s, p: figures[p.threshold], molding)
    assert [t["never_worse_than_molding"] for t in hold["tried"]] == [False, True, False, True]
    assert hold["threshold"] == 0.5
    # on the whole part alone, 0.3 and 0.7 would both have qualified (and 0.3 won)
    assert all(v["mean_response_s"] < 80.0 and v["mean_bounded_slowdown"] <= 4.0
               for v in (figures[0.3], figures[0.7]))  # fmt: skip


def test_evaluate_with_guard_auto_records_the_choices_per_strategy() -> None:
    from jobmolding.core.evaluate import evaluate, report
    from tests.core.test_molding_policy import FreeProcsPredictor

    rows = [*WARMUP, *[(1010 + 5 * k, 100, 8 if k % 2 else 4, 300, 1 + k % 3) for k in range(9)]]
    setup = setup_for(rows, warmup=6)
    params = MoldingParams(runtime_model="downey", guard=None)
    runs = evaluate(setup, ["baseline", "molding", "delay"], params, lambda s: FreeProcsPredictor())
    out = report(runs, params, {})
    assert "guard" not in out["baseline"]
    assert out["molding"]["guard"]["guard"] in GUARDS
    assert out["delay"]["guard"]["guard"] == out["molding"]["guard"]["guard"]
    assert out["delay"]["guard"]["hold"]["threshold"] in (0.3, 0.5, 0.7, 1.0)
    assert out["params"]["guard"].startswith("chosen on the tuning part")


def test_a_candidate_doing_more_work_than_the_original_is_not_offered() -> None:
    # Downey with A = n0 = 8: shrinking to 4 or 2 saves work, expanding to 16 costs more
    cands = speedup_candidates(8, np.array([2, 4, 8, 16]), 3600.0, 86400.0, sigma=1.0)
    work = cands.procs * cands.factors / 8
    assert work[cands.procs < 8].max() < 1.0 < work[cands.procs == 16][0]
    kept = within_work(cands, 8, 1.0)
    assert kept.procs.tolist() == [2, 4, 8]
    assert kept.req_time_s.tolist() == cands.req_time_s[:3].tolist()
    assert within_work(cands, 8, float("inf")).procs.tolist() == [2, 4, 8, 16]
    assert within_work(cands, 8, work[3] + 1e-6).procs.tolist() == [2, 4, 8, 16]
    with pytest.raises(ValueError, match="work_limit"):
        ArrivalRules(work_limit=0.9)


def test_the_decision_never_expands_a_job_under_the_work_limit() -> None:
    class LargerIsSooner:  # the larger the size, the shorter the wait: expanding looks best
        def predict(self, snapshot, requests, runtimes=None):
            return 1000.0 / requests.procs, runtimes or [point(100.0)] * len(requests)

        def runtimes(self, snapshot, requests):
            return [point(100.0)] * len(requests)

        def running_ends(self, snapshot):
            return predicted_ends(snapshot, None, lambda batch: self.runtimes(snapshot, batch))

    empty = ActiveJobs(RequestBatch.of([]), np.zeros(0), np.zeros(0, np.int64))
    snapshot = Snapshot(0.0, 0.0, empty, empty, pd.DataFrame(), 32)
    # 16 x 0.8 / 8 = 1.6 times the original's work; 4 x 1.5 / 8 = 0.75
    cands = Candidates(np.array([4, 8, 16]), np.full(3, 600.0), np.array([1.5, 1.0, 0.8]))
    request = JobRequest(user=1, procs=8, req_time_s=600.0, submit_s=0.0)
    limited = decide_arrival(snapshot, request, cands, LargerIsSooner(), ArrivalRules(delay=False))
    assert limited.procs == 8 and limited.now.procs.tolist() == [4, 8]
    unlimited = ArrivalRules(delay=False, work_limit=float("inf"))
    assert decide_arrival(snapshot, request, cands, LargerIsSooner(), unlimited).procs == 16


def test_evaluate_reports_progress_through_the_tuning_replays() -> None:
    """The guard's tuning replays move the progress on (on a whole log they take longer than
    the baseline): each replay ends at its planned share."""
    from jobmolding.core.evaluate import evaluate, planned_weights, replay_weight
    from tests.core.test_molding_policy import FreeProcsPredictor

    rows = [*WARMUP, *[(1010 + 5 * k, 100, 8 if k % 2 else 4, 300, 1 + k % 3) for k in range(9)]]
    setup = setup_for(rows, warmup=6)
    params = MoldingParams(runtime_model="downey", guard=None)
    strategies = ["baseline", "molding"]
    seen: list[float] = []
    evaluate(setup, strategies, params, lambda s: FreeProcsPredictor(), seen.append)
    weights = planned_weights(setup, strategies, params)
    tune = tuning_setup(setup)
    plain = replay_weight(tune, MoldingParams(strategy="baseline"))
    acting = replay_weight(tune, MoldingParams(strategy="molding"))
    # baseline, then the tuning part's plain replay and one per guard below 1, then molding's:
    # each replay's end is reported at its planned place
    ends = [weights[0], weights[0] + plain]
    ends += [ends[-1] + acting * k for k in range(1, sum(g < 1.0 for g in GUARDS) + 1)]
    ends.append(ends[-1] + replay_weight(setup, params))
    assert ends[-1] == pytest.approx(sum(weights))
    moves = [v for k, v in enumerate(seen) if k == 0 or v > seen[k - 1] + 1e-12]
    assert [v * sum(weights) for v in moves] == pytest.approx(ends)
    assert seen == sorted(seen) and seen[-1] == 1.0
