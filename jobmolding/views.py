"""Molding API: start a run on a trace (202), list and read your own, fetch its plots."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import mixins, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request

from jobmolding import services
from jobmolding.models import MoldingRun
from jobmolding.plots import PLOTS
from jobmolding.serializers import MoldingRequestSerializer, MoldingRunSerializer
from queuecast.permissions import visible_to
from traces.models import Trace
from traces.run_start import StartRunOnTrace


class MoldingRunViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """Molding runs: your own (staff: all)."""

    permission_classes = [IsAuthenticated]
    serializer_class = MoldingRunSerializer

    def get_queryset(self) -> QuerySet[MoldingRun]:
        runs = MoldingRun.objects.select_related("owner", "trace")
        if getattr(self, "swagger_fake_view", False):  # schema generation: no user
            return runs.none()
        return visible_to(runs, self.request.user)

    @extend_schema(
        parameters=[OpenApiParameter("name", str, OpenApiParameter.PATH, enum=list(PLOTS))],
        responses={(200, "image/png"): OpenApiResponse(OpenApiTypes.BINARY)},
    )
    @action(detail=True, methods=["get"], url_path=r"plots/(?P<name>[a-z_]+)", url_name="plot")
    def plot(self, request: Request, pk: str, name: str) -> HttpResponse:
        """One PNG plot of a done run: ``load``, ``response_by_class`` or ``sizes``."""
        png = services.plot_of(self.get_object(), name)
        return HttpResponse(png, content_type="image/png")


@extend_schema_view(
    create=extend_schema(request=MoldingRequestSerializer, responses={202: MoldingRunSerializer})
)
class TraceMoldingViewSet(StartRunOnTrace):
    """Start a molding evaluation of a stored trace; answers 202 with the run's URL."""

    permission_classes = [IsAuthenticated]
    request_serializer = MoldingRequestSerializer
    run_serializer = MoldingRunSerializer

    def start(self, trace: Trace, user: Any, form: Any) -> MoldingRun:
        return services.new_molding_run(trace, user, form.settings())
