"""Registers the replay API on the shared router."""

from pyss_adapter.views import ReplayViewSet, TraceReplayViewSet
from queuecast.router import router

router.register("replays", ReplayViewSet, basename="replay")
router.register(r"traces/(?P<trace_pk>\d+)/replays", TraceReplayViewSet, basename="trace-replay")
