"""REST API of live sites: sites (staff create), their live queue, predictions, and the jobs
users submit (molded, maybe held, released into the site's batch system)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import SAFE_METHODS, BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from holdqueue.models import Site, SiteJob
from holdqueue.serializers import (
    HeldJobSerializer,
    JobCreateSerializer,
    LiveStatusSerializer,
    PredictSerializer,
    QueueSerializer,
    SiteCreateSerializer,
    SiteJobDetailSerializer,
    SiteJobSerializer,
    SitePredictAnswerSerializer,
    SiteSerializer,
    SiteStatusSerializer,
)
from holdqueue.services import jobs as job_services
from holdqueue.services import live, predict, sites
from holdqueue.services.idempotency import clean_key
from queuecast.answers import represent

IDEMPOTENCY = OpenApiParameter(
    "Idempotency-Key",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    required=False,
    description="A retried POST with the same key and body returns the first answer (no second "
    "job); at most 200 printable characters. 409 if the body differs or the first request is "
    "still being submitted.",
)
JOB_ID = OpenApiParameter("jid", OpenApiTypes.INT, OpenApiParameter.PATH)


class StaffCreates(BasePermission):
    message = "Only staff users create or delete sites."

    def has_permission(self, request, view) -> bool:
        if request.method in SAFE_METHODS or view.action not in ("create", "destroy"):
            return True
        return bool(request.user.is_staff)


def job_status(job: SiteJob) -> int:
    """201/200 normally; 202 while the batch system's answer is still being checked."""
    return status.HTTP_202_ACCEPTED if job.state == SiteJob.SUBMITTING else status.HTTP_200_OK


class SiteViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    queryset = Site.objects.select_related("trace")  # a simulated site reads its trace
    serializer_class = SiteSerializer
    permission_classes = [IsAuthenticated, StaffCreates]

    @extend_schema(request=SiteCreateSerializer, responses={201: SiteSerializer})
    def create(self, request: Request) -> Response:
        data = SiteCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        site = sites.create_site(data.validated_data, request.user)
        body = SiteSerializer(site, context={"request": request}).data
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(
        parameters=[OpenApiParameter("force", OpenApiTypes.BOOL, OpenApiParameter.QUERY)],
        responses={204: None, 409: OpenApiTypes.OBJECT},
    )
    def destroy(self, request: Request, pk: str | None = None) -> Response:
        force = request.query_params.get("force", "").lower() in ("1", "true", "yes")
        sites.delete_site(self.get_object(), force=force)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(responses={200: SiteStatusSerializer, 503: OpenApiTypes.OBJECT})
    def retrieve(self, request: Request, pk: str | None = None) -> Response:
        site = self.get_object()
        status_now = LiveStatusSerializer(live.site_status(site)).data
        return Response({**self.get_serializer(site).data, **status_now})

    @extend_schema(responses={200: QueueSerializer, 503: OpenApiTypes.OBJECT})
    @action(detail=True, methods=["get"])
    def queue(self, request: Request, pk: str | None = None) -> Response:
        return Response(QueueSerializer(live.queue_body(self.get_object(), request.user)).data)

    @extend_schema(request=PredictSerializer, responses={200: SitePredictAnswerSerializer})
    @action(detail=True, methods=["post"])
    def predict(self, request: Request, pk: str | None = None) -> Response:
        site = self.get_object()
        query = PredictSerializer(data=request.data, context={"site": site, "request": request})
        query.is_valid(raise_exception=True)
        answer = predict.predict_for_query(site, request.user, query.validated_data)
        return Response(represent(SitePredictAnswerSerializer, answer))

    @extend_schema(responses={200: HeldJobSerializer(many=True)})
    @action(detail=True, methods=["get"], pagination_class=None)  # a bare list, as documented
    def holdqueue(self, request: Request, pk: str | None = None) -> Response:
        held = job_services.hold_queue(self.get_object()).select_related("owner")
        return Response(HeldJobSerializer(held, many=True, context={"request": request}).data)

    @extend_schema(methods=["GET"], responses={200: SiteJobSerializer(many=True)})
    @extend_schema(
        methods=["POST"],
        request=JobCreateSerializer,
        parameters=[IDEMPOTENCY],
        responses={
            201: SiteJobSerializer,
            202: SiteJobSerializer,
            409: OpenApiTypes.OBJECT,
            503: OpenApiTypes.OBJECT,
        },
    )
    @action(detail=True, methods=["get", "post"])
    def jobs(self, request: Request, pk: str | None = None) -> Response:
        site = self.get_object()
        if request.method == "GET":
            page = self.paginate_queryset(job_services.visible_jobs(site, request.user))
            return self.get_paginated_response(SiteJobSerializer(page, many=True).data)
        data = JobCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        key = clean_key(request.headers)
        job, created = job_services.submit_job(site, request.user, data.validated_data, key)
        headers = {} if created else {"Idempotent-Replayed": "true"}
        code = status.HTTP_202_ACCEPTED if job.state == SiteJob.SUBMITTING else 201
        return Response(SiteJobSerializer(job).data, status=code, headers=headers)

    @extend_schema(parameters=[JOB_ID], responses={200: SiteJobDetailSerializer})
    @action(detail=True, methods=["get"], url_path=r"jobs/(?P<jid>[0-9]+)")
    def job(self, request: Request, pk: str | None = None, jid: str = "") -> Response:
        site = self.get_object()
        job = job_services.get_job(site, request.user, int(jid))
        why = predict.why_held(site, job)
        return Response(SiteJobDetailSerializer(job, context={"why": why}).data)

    @extend_schema(
        request=None,
        parameters=[JOB_ID],
        responses={200: SiteJobSerializer, 202: SiteJobSerializer},
    )
    @action(detail=True, methods=["post"], url_path=r"jobs/(?P<jid>[0-9]+)/release")
    def release(self, request: Request, pk: str | None = None, jid: str = "") -> Response:
        job = job_services.get_job(self.get_object(), request.user, int(jid))
        released = job_services.release_now(job)
        return Response(SiteJobSerializer(released).data, status=job_status(released))

    @extend_schema(
        request=None,
        parameters=[JOB_ID],
        responses={200: SiteJobSerializer, 409: OpenApiTypes.OBJECT, 502: OpenApiTypes.OBJECT},
    )
    @action(detail=True, methods=["post"], url_path=r"jobs/(?P<jid>[0-9]+)/cancel")
    def cancel(self, request: Request, pk: str | None = None, jid: str = "") -> Response:
        job = job_services.get_job(self.get_object(), request.user, int(jid))
        return Response(SiteJobSerializer(job_services.cancel_job(job)).data)
