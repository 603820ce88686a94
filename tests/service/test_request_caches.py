"""What a warm prediction no longer rebuilds per request (issue 18, sixth round): each cache
gives the answer of the uncached path, and a new trace version or history gives the new
answer."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from predictor.serializers.wait import WaitAnswerSerializer
from predictor.services import predict as predict_service
from queuecast.answers import represent
from queuecast.errors import InvalidInput
from tests.service.test_wait_api import job
from tests.service.traces_support import demo_trace

pytestmark = pytest.mark.django_db


@pytest.fixture
def trace(tmp_path: Path):
    predict_service.BUNDLES.clear()
    return demo_trace(tmp_path)


def test_the_reused_answer_writer_writes_what_a_new_serializer_writes(trace):
    query = {**job(trace), "confidence": 0.9, "within_s": 600.0}
    answer = predict_service.predict_wait(trace, query)
    fresh = WaitAnswerSerializer(answer).data
    assert represent(WaitAnswerSerializer, answer) == fresh
    assert represent(WaitAnswerSerializer, answer) == fresh  # the same instance, again
    other = predict_service.predict_wait(trace, {**query, "requested_procs": 1})
    assert represent(WaitAnswerSerializer, other) == WaitAnswerSerializer(other).data


def test_known_queues_are_the_bundles_own_and_a_new_bundle_has_its_own(trace):
    bundle = predict_service.bundle_for(trace, block=True)
    queues = sorted(set(bundle.jobs["queue_id"].tolist()))
    assert predict_service.known_queues(bundle) == queues
    column = predict_service.resolve_queue(bundle.jobs["queue_id"], queues[0])
    assert predict_service.resolve_queue(predict_service.known_queues(bundle), queues[0]) == column
    # A new version of the log (another bundle) with one more queue: its own list answers.
    jobs = bundle.jobs.copy()
    jobs.loc[jobs.index[-1], "queue_id"] = max(queues) + 7
    ctx = bundle.wait_ctx
    newer = replace(bundle, wait_ctx=replace(ctx, jobs=jobs))
    assert predict_service.known_queues(newer) == sorted({*queues, max(queues) + 7})
    assert predict_service.resolve_queue(predict_service.known_queues(newer), max(queues) + 7)
    with pytest.raises(InvalidInput):  # the old bundle still does not know that queue
        predict_service.resolve_queue(predict_service.known_queues(bundle), max(queues) + 7)
