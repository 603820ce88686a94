"""The Lublin-Feitelson generator: reproducible, within the machine, shaped like the model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from traces.core.swf import SWF_FIELDS, read_swf
from traces.core.swf_header import parse_header
from traces.core.synthetic import ALL_JOBS, BATCH, generate_lublin, lublin_header


def jobs(seed: int = 3, n: int = 20_000, procs: int = 128, **kw) -> pd.DataFrame:
    return generate_lublin(n, procs, rng=np.random.default_rng(seed), **kw)


@pytest.fixture(scope="module")
def batch() -> pd.DataFrame:
    return jobs()


def hour_counts(submit_s: pd.Series) -> np.ndarray:
    return np.bincount(((submit_s % 86400) // 3600).astype(int), minlength=24)


def test_same_seed_gives_the_same_trace() -> None:
    pd.testing.assert_frame_equal(jobs(seed=11, n=500), jobs(seed=11, n=500))


def test_another_seed_gives_another_trace() -> None:
    first, second = jobs(seed=11, n=500), jobs(seed=12, n=500)
    assert not first["run_time"].equals(second["run_time"])
    assert not first["submit_time"].equals(second["submit_time"])


def test_jobs_have_the_18_swf_columns_and_fixed_fields(batch: pd.DataFrame) -> None:
    assert tuple(batch.columns) == SWF_FIELDS
    assert (batch["job_id"] == np.arange(1, len(batch) + 1)).all()
    assert (batch["wait_time"] == -1).all() and (batch["avg_cpu_time"] == -1).all()
    assert (batch["status"] == 1).all() and (batch["queue_id"] == 1).all()
    assert (batch["allocated_procs"] == batch["requested_procs"]).all()
    assert batch["user_id"].between(1, 20).all() and batch["group_id"].between(1, 4).all()


@pytest.mark.parametrize("procs", [1, 2, 100, 128, 1000])
def test_sizes_stay_within_the_machine(procs: int) -> None:
    sizes = jobs(n=5000, procs=procs)["allocated_procs"]
    assert sizes.min() >= 1 and sizes.max() <= procs
    assert sizes.max() > procs / 4  # and the big end of the machine is used


def test_serial_share_is_near_the_parameter(batch: pd.DataFrame) -> None:
    serial = (batch["allocated_procs"] == 1).mean()
    assert abs(serial - BATCH.serial_prob) < 0.02  # 6 standard errors at n = 20000


def test_powers_of_two_are_frequent(batch: pd.DataFrame) -> None:
    parallel = batch["allocated_procs"][batch["allocated_procs"] > 1].to_numpy()
    share = np.mean((parallel & (parallel - 1)) == 0)
    expected = BATCH.pow2_prob / (1 - BATCH.serial_prob)  # 0.945, plus chance hits
    assert share > expected - 0.02


def test_runtimes_are_positive_capped_and_within_requested_time(batch: pd.DataFrame) -> None:
    assert (batch["run_time"] >= 1).all()
    assert (batch["run_time"] <= np.exp(BATCH.max_log_runtime)).all()
    assert (batch["run_time"] <= batch["requested_time"]).all()
    assert (batch["requested_time"] <= 48 * 3600).all()


def test_big_jobs_run_longer_as_the_mixing_probability_drops(batch: pd.DataFrame) -> None:
    small = batch["run_time"][batch["allocated_procs"] <= 2].median()
    big = batch["run_time"][batch["allocated_procs"] >= 64].median()
    assert big > 5 * small


def test_submit_times_start_at_zero_and_never_decrease(batch: pd.DataFrame) -> None:
    submit = batch["submit_time"].to_numpy()
    assert submit[0] == 0 and (np.diff(submit) >= 0).all()
    assert (submit == np.floor(submit)).all()


def test_daily_cycle_puts_more_arrivals_in_the_day_than_at_night(batch: pd.DataFrame) -> None:
    per_hour = hour_counts(batch["submit_time"])
    assert per_hour[10:16].sum() > 2 * per_hour[0:6].sum()


def test_zero_jobs_give_an_empty_frame() -> None:
    empty = jobs(n=0)
    assert len(empty) == 0 and tuple(empty.columns) == SWF_FIELDS


def test_bad_arguments_are_rejected() -> None:
    with pytest.raises(ValueError, match="machine_procs >= 1"):
        jobs(n=10, procs=0)


def test_header_parses_with_machine_size_seed_and_parameters() -> None:
    header = parse_header(lublin_header(300, 256, seed=5, params=ALL_JOBS))
    assert header.version == "2.2" and header.machine_procs == 256
    assert header.max_jobs == header.max_records == 300
    assert header.unix_start_time % 86400 == 0  # midnight, so the daily cycle keeps its phase
    assert "seed=5, model=all" in header.notes[0]
    assert "serial_prob=0.244" in header.notes[1]


@pytest.mark.realtrace
def test_all_jobs_model_matches_the_reference_lublin_256_sample(shared_traces: Path) -> None:
    """The reference generator's own output (typeless fit, 256 nodes) as a fidelity check."""
    reference = read_swf(shared_traces / "lublin_256.swf.gz").jobs
    ours = jobs(seed=1, n=len(reference), procs=256, params=ALL_JOBS)
    for frame in (reference, ours):
        sizes = frame["allocated_procs"].to_numpy()
        frame.attrs["stats"] = (np.mean(sizes == 1), np.mean((sizes & (sizes - 1)) == 0))
    assert np.allclose(ours.attrs["stats"], reference.attrs["stats"], atol=0.02)
    assert ours["run_time"].median() == pytest.approx(reference["run_time"].median(), rel=0.25)
    shape = np.corrcoef(hour_counts(ours["submit_time"]), hour_counts(reference["submit_time"]))
    assert shape[0, 1] > 0.9
