"""Registers the molding API on the shared router."""

from jobmolding.views import MoldingRunViewSet, TraceMoldingViewSet
from queuecast.router import router

router.register("molding-runs", MoldingRunViewSet, basename="molding-run")
router.register(
    r"traces/(?P<trace_pk>\d+)/molding-runs", TraceMoldingViewSet, basename="trace-molding-run"
)
