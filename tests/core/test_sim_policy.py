"""The engine's submit hook: a policy resizes or holds arrivals; results count jobs as run."""

from __future__ import annotations

import numpy as np
import pytest

from pyss_adapter.core.engine import Engine, JobState
from pyss_adapter.core.jobs import sim_jobs_from_arrays
from pyss_adapter.core.policy import InvalidDecision, SubmitDecision
from pyss_adapter.core.pyss_io import result_frame
from pyss_adapter.core.replay import replay_jobs
from pyss_adapter.core.stats import all_jobs_view, policy_view, summarise, utilisation


def _jobs(rows: list[tuple[float, float, float, int]], procs: int):
    """rows: (submit, runtime, estimate, processors)."""
    submit, run, est, n = (np.array(c) for c in zip(*rows, strict=True))
    return sim_jobs_from_arrays(submit, run, est, n, procs)


class Fixed:
    """Decides from a dict job index -> SubmitDecision; records what it was told."""

    def __init__(self, decisions: dict[int, SubmitDecision] | None = None) -> None:
        self.decisions = decisions or {}
        self.events: list[tuple[str, int, float]] = []

    def on_submit(self, engine: Engine, j: int, now: float) -> SubmitDecision | None:
        self.events.append(("submit", j, now))
        return self.decisions.get(j)

    def on_start(self, engine: Engine, j: int, now: float) -> None:
        self.events.append(("start", j, now))

    def on_finish(self, engine: Engine, j: int, now: float) -> None:
        self.events.append(("finish", j, now))


# A holds 6 of 10 processors until 100; B (8) is the blocked head, shadow 100, extra 2.
BACKFILL = [(0, 100, 100, 6), (1, 50, 50, 8), (2, 50, 50, 3), (3, 200, 200, 1)]


def test_a_policy_that_decides_nothing_changes_nothing() -> None:
    jobs = _jobs(BACKFILL, 10)
    plain = replay_jobs(jobs, "easy")
    hooked = replay_jobs(jobs, "easy", policy=Fixed())
    np.testing.assert_array_equal(plain.start_s, hooked.start_s)
    np.testing.assert_array_equal(plain.finish_order, hooked.finish_order)
    assert summarise(plain) == summarise(hooked)


def test_the_policy_hears_submits_starts_and_finishes_in_event_order() -> None:
    policy = Fixed()
    replay_jobs(_jobs(BACKFILL, 10), "easy", policy=policy)
    # starts 0, 100, 2, 3; ends 100, 150, 52, 203
    assert policy.events == [
        ("submit", 0, 0), ("start", 0, 0), ("submit", 1, 1), ("submit", 2, 2),
        ("start", 2, 2), ("submit", 3, 3), ("start", 3, 3), ("finish", 2, 52),
        ("finish", 0, 100), ("start", 1, 100), ("finish", 1, 150), ("finish", 3, 203),
    ]  # fmt: skip


def test_molding_the_blocked_head_lets_it_start_at_once_and_counts_its_new_size() -> None:
    # B asks for 8 of the 4 free processors; molded to 4 it runs 100 s instead of 50.
    policy = Fixed({1: SubmitDecision(procs=4, estimate_s=100, runtime_s=100)})
    result = replay_jobs(_jobs(BACKFILL, 10), "easy", policy=policy)
    # B starts at 1 on 4 processors; C (3) waits for A at 100, D (1) waits for... nothing:
    # 10 - 6 - 4 = 0 free at 3, so D waits for A too (C, then D at 100).
    assert result.start_s.tolist() == [0, 1, 100, 100]
    assert result.n_procs.tolist() == [6, 4, 3, 1]
    assert result.original_procs.tolist() == [6, 8, 3, 1]
    assert result.end_s.tolist() == [100, 101, 150, 300]
    assert result.runtime_s[1] == 100 and result.requested_s[1] == 100
    area = 6 * 100 + 4 * 100 + 3 * 50 + 1 * 200
    assert utilisation(result) == pytest.approx(area / (10 * 300))
    view = policy_view(result)
    assert view["molded_share"] == 0.25 and view["delayed_share"] == 0.0


def test_a_held_job_enters_at_its_release_and_waits_from_its_original_submit() -> None:
    # A blocks the machine until 100; B (submitted at 10) is held until 100.
    rows = [(0, 100, 100, 10), (10, 50, 50, 5), (20, 10, 10, 5)]
    result = replay_jobs(_jobs(rows, 10), "easy", policy=Fixed({1: SubmitDecision(release_at=100)}))
    # At 100 A's processors are back (it ends at its estimate); C queued since 20 is
    # the head, B enters behind it and both start.
    assert result.start_s.tolist() == [0, 100, 100]
    assert result.release_s.tolist() == [0, 100, 20]
    assert result.wait_s.tolist() == [0, 90, 80]
    assert result.queue_wait_s.tolist() == [0, 0, 80]
    assert result.delay_s.tolist() == [0, 90, 0]
    assert all_jobs_view(result)["mean_wait_s"] == pytest.approx(170 / 3)
    frame = result_frame(result)
    assert frame["release_time"].tolist() == [0, 100, 20]
    assert summarise(result)["policy"]["mean_delay_of_delayed_s"] == 90


def test_a_released_job_enters_before_an_arrival_at_the_same_time() -> None:
    # Both need the whole machine when A ends at 100: B (held from 10 to 50) is ahead
    # of C, which arrives at 50 itself.
    rows = [(0, 100, 100, 4), (10, 10, 10, 4), (50, 10, 10, 4)]
    result = replay_jobs(_jobs(rows, 4), "fcfs", policy=Fixed({1: SubmitDecision(release_at=50)}))
    assert result.start_s.tolist() == [0, 100, 110]


def test_a_held_job_is_held_until_release_and_asked_again_only_on_request() -> None:
    rows = [(0, 10, 10, 1), (5, 10, 10, 1)]
    once = Fixed({1: SubmitDecision(release_at=30)})
    replay_jobs(_jobs(rows, 4), "easy", policy=once)
    assert [e for e in once.events if e[0] == "submit"] == [("submit", 0, 0), ("submit", 1, 5)]
    again = Fixed({1: SubmitDecision(release_at=30, ask_again=True)})
    result = replay_jobs(_jobs(rows, 4), "easy", policy=again)
    submits = [e for e in again.events if e[0] == "submit"]
    # asked at 5 (held to 30), again at 30 (held to 30 again = submit now)
    assert submits == [("submit", 0, 0), ("submit", 1, 5), ("submit", 1, 30)]
    assert result.start_s.tolist() == [0, 30]


def test_the_engine_shows_a_held_job_and_its_state_to_the_policy() -> None:
    seen = {}

    class Peek(Fixed):
        def on_submit(self, engine: Engine, j: int, now: float) -> SubmitDecision | None:
            if j == 2:
                seen.update(
                    held=engine.held_jobs(),
                    state=engine.job_state(1),
                    running=engine.running_jobs(),
                    queue=list(engine.queue),
                )
            return super().on_submit(engine, j, now)

    rows = [(0, 100, 100, 2), (1, 10, 10, 4), (2, 10, 10, 1)]
    replay_jobs(_jobs(rows, 4), "easy", policy=Peek({1: SubmitDecision(release_at=40)}))
    assert seen == {"held": [(40, 1)], "state": JobState.HELD, "running": [(0, 0)], "queue": []}


@pytest.mark.parametrize(
    ("decision", "field"),
    [
        (SubmitDecision(procs=11), "procs"),
        (SubmitDecision(procs=0), "procs"),
        (SubmitDecision(estimate_s=0.5), "estimate_s"),
        (SubmitDecision(runtime_s=float("nan")), "runtime_s"),
        (SubmitDecision(release_at=0), "release_at"),
    ],
)
def test_an_impossible_decision_is_rejected_naming_the_job_and_field(
    decision: SubmitDecision, field: str
) -> None:
    with pytest.raises(InvalidDecision, match=rf"job index 1 \(job 2\).*{field}"):
        replay_jobs(_jobs(BACKFILL, 10), "easy", policy=Fixed({1: decision}))


def test_a_new_request_revises_tsafrir_estimates_at_submission() -> None:
    # user 0 only: the first job finishes (runtime 10) before the second arrives, so
    # Tsafrir's estimate is min(request, 10); a molded request of 5 s caps it at 5.
    jobs = sim_jobs_from_arrays(
        np.array([0.0, 20.0]), np.array([10.0, 5.0]), np.array([100.0, 100.0]),
        np.array([1, 1]), 4,
    )  # fmt: skip
    result = replay_jobs(jobs, "easy", "tsafrir", policy=Fixed({1: SubmitDecision(estimate_s=5)}))
    assert result.estimate_s.tolist() == [100, 5]
    plain = replay_jobs(jobs, "easy", "tsafrir")
    assert plain.estimate_s.tolist() == [100, 10]
