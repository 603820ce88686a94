"""Registers the traces API on the shared router."""

from queuecast.router import router
from traces.views import TraceViewSet

router.register("traces", TraceViewSet, basename="trace")
