"""REST API of traces: upload (202 + ingest task), list, detail, jobs, SWF export, delete."""

from __future__ import annotations

import json

from django.http import StreamingHttpResponse
from django.utils.http import content_disposition_header as content_disposition
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.pagination import PageNumberPagination
from rest_framework.parsers import MultiPartParser
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from queuecast.errors import ConflictError
from queuecast.longrun import Status
from traces import services
from traces.models import Trace
from traces.permissions import IsOwnerOrStaffToChange
from traces.serializers import (
    JobFilterSerializer,
    JobSerializer,
    TraceListSerializer,
    TraceSerializer,
    TraceUploadSerializer,
)


class SizeLimitedMultiPartParser(MultiPartParser):
    """Refuses an oversized upload from its Content-Length before reading the body."""

    def parse(self, stream, media_type=None, parser_context=None):
        request = (parser_context or {}).get("request")
        if request is not None:
            services.check_request_size(request.META.get("CONTENT_LENGTH"))
        return super().parse(stream, media_type, parser_context)


class SwfRenderer(BaseRenderer):
    media_type = "text/plain"
    format = "swf"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return data if isinstance(data, str | bytes) else json.dumps(data)


class JobPagination(PageNumberPagination):
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 10_000


class TraceViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """SWF traces. Reading needs a login; deleting needs the owner or staff."""

    queryset = Trace.objects.select_related("owner").order_by("-created_at")
    serializer_class = TraceSerializer
    permission_classes = [IsOwnerOrStaffToChange]
    parser_classes = [SizeLimitedMultiPartParser]  # the only body this API takes is an upload

    @extend_schema(
        request={"multipart/form-data": TraceUploadSerializer},
        responses={
            202: TraceSerializer,
            409: OpenApiResponse(description="name taken"),
            413: OpenApiResponse(description="upload over the size limit"),
        },
    )
    def create(self, request: Request) -> Response:
        """Upload a .swf or .swf.gz; answers 202 and ingests in a background task."""
        form = TraceUploadSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = dict(form.validated_data)
        trace = services.accept_upload(data.pop("file"), owner=request.user, **data)
        body = TraceSerializer(trace, context=self.get_serializer_context()).data
        return Response(
            body, status=status.HTTP_202_ACCEPTED, headers={"Location": str(body["url"])}
        )

    @extend_schema(parameters=[JobFilterSerializer], responses=JobSerializer(many=True))
    @action(
        detail=True, methods=["get"], serializer_class=JobSerializer, pagination_class=JobPagination
    )
    def jobs(self, request: Request, pk: str | None = None) -> Response:
        """The trace's jobs by submit time, paged; filter by user, queue, submit window."""
        trace = self.get_object()
        filters = JobFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        page = self.paginate_queryset(services.filter_jobs(trace, filters.validated_data))
        return self.get_paginated_response(JobSerializer(page, many=True).data)

    @extend_schema(
        operation_id="traces_export_swf", responses={(200, "text/plain"): OpenApiTypes.STR}
    )
    def export(self, request: Request, pk: str | None = None) -> StreamingHttpResponse:
        """The stored trace as SWF text (header, then one line per job)."""
        # Routed as /api/traces/{id}/export.swf in traces/pages.py, outside the router.
        trace = self.get_object()
        if trace.status != Status.DONE:
            raise ConflictError(f"trace {trace.name!r} is {trace.status}; only done traces export")
        response = StreamingHttpResponse(services.export_lines(trace), content_type="text/plain")
        # Built by Django: a name with CR/LF or quotes cannot break the header.
        response["Content-Disposition"] = content_disposition(True, f"{trace.name}.swf")
        return response

    def get_serializer_class(self) -> type[TraceSerializer]:
        return TraceListSerializer if self.action == "list" else TraceSerializer
