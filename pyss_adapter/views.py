"""Replay API: start one on a trace (202), list your own, read one, delete your own."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, viewsets

from pyss_adapter import services
from pyss_adapter.models import Replay
from pyss_adapter.serializers import (
    ReplayDetailSerializer,
    ReplayRequestSerializer,
    ReplaySerializer,
)
from queuecast.permissions import IsOwnerOrStaffToChange, visible_to
from traces.models import Trace
from traces.run_start import StartRunOnTrace


class ReplayViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """Replays: a user lists and reads their own (another's is a 404), staff all
    (the same rule as evaluation runs; docs/operations.md)."""

    permission_classes = [IsOwnerOrStaffToChange]
    queryset = Replay.objects.none()  # typed schema; get_queryset scopes per user

    def get_queryset(self) -> QuerySet[Replay]:
        return visible_to(Replay.objects.select_related("owner", "trace"), self.request.user)

    def get_serializer_class(self) -> type[ReplaySerializer]:
        return ReplayDetailSerializer if self.action == "retrieve" else ReplaySerializer


@extend_schema_view(
    create=extend_schema(request=ReplayRequestSerializer, responses={202: ReplaySerializer})
)
class TraceReplayViewSet(StartRunOnTrace):
    """Start a replay of a stored trace; answers 202 with the replay's URL."""

    permission_classes = [IsOwnerOrStaffToChange]
    request_serializer = ReplayRequestSerializer
    run_serializer = ReplaySerializer

    def start(self, trace: Trace, user: Any, form: Any) -> Replay:
        return services.new_replay(trace, user, form.settings())
