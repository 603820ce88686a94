"""Progress over planned stages (``jobmolding.core.stages.Stages``)."""

from __future__ import annotations

import pytest

from jobmolding.core.stages import Stages


def test_each_stage_fills_its_share_after_the_ones_before() -> None:
    seen: list[float] = []
    stages = Stages(seen.append, total=10.0)
    first, second = stages.stage(2.0), stages.stage(8.0)
    assert first is not None and second is not None
    first(0.5)
    first(1.0)
    second(0.25)
    second(1.0)
    assert seen == pytest.approx([0.1, 0.2, 0.4, 1.0])


def test_the_whole_only_grows_and_stops_at_one() -> None:
    seen: list[float] = []
    stages = Stages(seen.append, total=4.0)
    part = stages.stage(2.0)
    assert part is not None
    part(0.5)
    part(0.2)  # a stage that reports a smaller fraction does not move the whole back
    stages.reach(3.0)  # a planned stage skipped
    late = stages.stage(5.0)  # more than planned: capped at 1
    assert late is not None
    late(1.0)
    assert seen == pytest.approx([0.25, 0.25, 0.75, 1.0])


def test_every_call_reaches_the_callback_even_when_the_whole_does_not_move() -> None:
    calls: list[float] = []
    stages = Stages(calls.append, total=1000.0)
    part = stages.stage(1.0)
    assert part is not None
    for _ in range(5):
        part(0.0)  # a task's callback checks its time limit on each call
    assert len(calls) == 5


def test_without_a_callback_stages_report_nothing() -> None:
    stages = Stages(None, total=3.0)
    assert stages.stage(1.0) is None
    stages.reach(2.0)
    assert stages.shown == 0.0
