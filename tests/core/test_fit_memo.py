"""Fits shared by an evaluation's replays (``jobmolding.core.fit_memo``): a bundle is reused
only for an equal history under equal settings, and a replay that reuses one decides exactly
as one that fits its own."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jobmolding.core.evaluate import evaluate, prepare
from jobmolding.core.fit_memo import FitMemo, digest
from jobmolding.core.policy import MoldingParams
from jobmolding.core.replay_bundle import ReplayBundle
from tests.core.test_molding_replay_bundle import small_log


def frame(values: list[float]) -> pd.DataFrame:
    return pd.DataFrame({"a": values, "b": np.arange(len(values))})


def counting_fit(calls: list[int], value: str):
    def fit() -> str:
        calls.append(1)
        return value

    return fit


def test_an_equal_history_under_equal_settings_is_fitted_once() -> None:
    memo, calls = FitMemo(), []
    first = memo.get("s", frame([1.0, 2.0]), counting_fit(calls, "x"))
    again = memo.get("s", frame([1.0, 2.0]), counting_fit(calls, "y"))
    assert first == again == "x" and len(calls) == 1
    assert memo.as_dict() == {"fits_shared": 1, "fits_run": 1, "kept_at_most": 2}


@pytest.mark.parametrize(
    ("setting", "values"),
    [("s", [1.0, 2.5]), ("other", [1.0, 2.0]), ("s", [2.0, 1.0]), ("s", [1.0, 2.0, 3.0])],
)
def test_another_value_order_length_or_setting_is_fitted_anew(setting, values) -> None:
    memo, calls = FitMemo(), []
    memo.get("s", frame([1.0, 2.0]), counting_fit(calls, "x"))
    assert memo.get(setting, frame(values), counting_fit(calls, "y")) == "y"
    assert len(calls) == 2 and memo.hits == 0


def test_a_digest_collision_does_not_share_a_fit(monkeypatch) -> None:
    """The digest finds the entry; only ``DataFrame.equals`` lets it answer."""
    memo, calls = FitMemo(), []
    monkeypatch.setattr("jobmolding.core.fit_memo.digest", lambda f: "same")
    memo.get("s", frame([1.0, 2.0]), counting_fit(calls, "x"))
    assert memo.get("s", frame([1.0, 3.0]), counting_fit(calls, "y")) == "y"
    assert memo.hits == 0


def test_the_memo_keeps_the_most_recently_used_fits_only() -> None:
    memo, calls = FitMemo(size=2), []
    for v in (1.0, 2.0, 1.0, 3.0):  # 1 is used again before 3 comes: 2 is dropped
        memo.get("s", frame([v]), counting_fit(calls, str(v)))
    assert len(calls) == 3
    memo.get("s", frame([1.0]), counting_fit(calls, "again"))
    assert len(calls) == 3
    memo.get("s", frame([2.0]), counting_fit(calls, "anew"))
    assert len(calls) == 4
    with pytest.raises(ValueError, match="size"):
        FitMemo(size=0)


def test_a_fit_not_asked_to_be_kept_is_answered_but_drops_nothing() -> None:
    memo, calls = FitMemo(size=1), []
    memo.get("s", frame([1.0]), counting_fit(calls, "first"))
    assert memo.get("s", frame([2.0]), counting_fit(calls, "later"), keep=False) == "later"
    assert memo.get("s", frame([1.0]), counting_fit(calls, "again")) == "first"
    assert memo.get("s", frame([2.0]), counting_fit(calls, "anew"), keep=False) == "anew"
    assert len(calls) == 3 and memo.hits == 1


def test_the_digest_sees_a_nan_and_a_column_name() -> None:
    assert digest(frame([1.0, np.nan])) != digest(frame([1.0, 0.0]))
    assert digest(frame([1.0])) != digest(frame([1.0]).rename(columns={"a": "c"}))
    assert digest(frame([1.0, np.nan])) == digest(frame([1.0, np.nan]))


def run(log, memo):
    """Delay with the guard and the hold chosen on the tuning part (several replays of it)."""
    bundles: list[ReplayBundle] = []

    def make(s):
        bundles.append(ReplayBundle(s.jobs.machine_procs, "sim", "rangeset", memo=memo))
        return bundles[-1]

    setup = prepare(log, 16, tune_fraction=0.5)
    params = MoldingParams(strategy="delay", runtime_model="downey", guard=None)
    runs = evaluate(setup, ["molding", "delay"], params, make)
    return runs, bundles


def test_replays_sharing_fits_decide_exactly_as_replays_fitting_their_own() -> None:
    log = small_log(240, seed=5)
    alone, _ = run(log, None)
    memo = FitMemo()
    shared, bundles = run(log, memo)
    assert memo.hits >= 3  # the tuning part's replays fit equal histories first
    assert len(bundles) >= 5 and sum(b.fits_ for b in bundles) == memo.hits + memo.misses
    mold = shared["molding"].outcome
    assert (mold.procs != mold.original_procs).any()  # decisions were made to compare
    for name in ("molding", "delay"):
        a, b = alone[name].outcome, shared[name].outcome
        np.testing.assert_array_equal(a.procs, b.procs)
        np.testing.assert_array_equal(a.release_s, b.release_s)
        np.testing.assert_array_equal(a.start_s, b.start_s)
        assert alone[name].figures == shared[name].figures
        assert alone[name].guard == shared[name].guard
