"""Replay API: start one on a trace (202), list your own, read one, delete your own."""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from pyss_adapter import services
from pyss_adapter.models import Replay
from pyss_adapter.serializers import (
    ReplayDetailSerializer,
    ReplayRequestSerializer,
    ReplaySerializer,
)
from queuecast.permissions import IsOwnerOrStaffToChange, visible_to
from traces.models import Trace


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


class TraceReplayViewSet(viewsets.ViewSet):
    """Start a replay of a stored trace; answers 202 with the replay's URL."""

    permission_classes = [IsOwnerOrStaffToChange]

    @extend_schema(request=ReplayRequestSerializer, responses={202: ReplaySerializer})
    def create(self, request: Request, trace_pk: str) -> Response:
        trace = get_object_or_404(Trace, pk=trace_pk)
        form = ReplayRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        replay = services.new_replay(trace, request.user, form.settings())
        body = ReplaySerializer(replay, context={"request": request}).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})
