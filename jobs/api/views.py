import re

from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.scoping import TeamScopedMixin, request_active_team
from jobs.api.serializers import (
    FindingSerializer,
    JobSerializer,
    JobSubmitSerializer,
    JobSummarySerializer,
)
from jobs.codescan_views import served_sarif
from jobs.models import Job, JobKind
from jobs.reports import FINDING_FILTERS, findings_matching
from jobs.services import IdempotencyKeyReused, job_submit_idempotent

# Visible ASCII, as the IETF draft's examples (UUIDs, random strings) are. Anchored for the
# schema (OpenAPI patterns are searched, not matched); the view uses fullmatch.
IDEMPOTENCY_KEY_PATTERN = r"^[!-~]{1,255}$"
IDEMPOTENCY_KEY = re.compile(IDEMPOTENCY_KEY_PATTERN)
IDEMPOTENCY_KEY_HEADER = OpenApiParameter(
    "Idempotency-Key",
    str,
    OpenApiParameter.HEADER,
    pattern=IDEMPOTENCY_KEY_PATTERN,
    description=(
        "Optional, up to 255 visible ASCII characters, unique per upload. A retry with the same "
        "key and the same files (for 24 h, per team) returns the job the first request made, "
        "with 200 instead of 201, and creates no other; the same key with other files is 409."
    ),
)


class FindingsPagination(PageNumberPagination):
    page_size = 100


class JobViewSet(
    TeamScopedMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    """The team's jobs. POST multipart `kind` and one or more `files`; poll the job until its
    status is done (with its report) or failed (with an error a person can act on). A code
    scan's findings are paged at findings_url and its SARIF is at sarif_url."""

    queryset = Job.objects.select_related("team", "created_by", "reused_from").prefetch_related(
        "files"
    )
    permission_classes = [IsAuthenticated]
    lookup_field = "public_id"
    parser_classes = [MultiPartParser, FormParser]

    def get_queryset(self) -> QuerySet[Job]:
        queryset = super().get_queryset()
        # A list shows no report, and one report can be megabytes: never load it for one.
        return queryset.defer("report") if self.action == "list" else queryset

    def get_serializer_class(self):
        if self.action == "create":
            return JobSubmitSerializer
        return JobSummarySerializer if self.action == "list" else JobSerializer

    @extend_schema(
        request=JobSubmitSerializer,
        parameters=[IDEMPOTENCY_KEY_HEADER],
        responses={
            201: JobSerializer,
            200: OpenApiResponse(JobSerializer, "A retry: the job its Idempotency-Key made."),
            409: OpenApiResponse(description="The Idempotency-Key was used for other files."),
        },
    )
    def create(self, request: Request, *args, **kwargs) -> Response:
        key = request.headers.get("Idempotency-Key")
        if key is not None and not IDEMPOTENCY_KEY.fullmatch(key):
            raise ValidationError({"Idempotency-Key": "1 to 255 visible ASCII characters."})
        serializer = JobSubmitSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            submission = job_submit_idempotent(
                team=request_active_team(request),
                user=request.user,
                kind=serializer.validated_data["kind"],
                uploads=serializer.validated_data["files"],
                idempotency_key=key,
            )
        except IdempotencyKeyReused:
            return Response(
                {"detail": "This Idempotency-Key was used for other files: send a new key."},
                status=status.HTTP_409_CONFLICT,
            )
        body = JobSerializer(submission.job, context={"request": request}).data
        if submission.created:
            return Response(body, status=status.HTTP_201_CREATED)
        return Response(body, status=status.HTTP_200_OK, headers={"Idempotent-Replayed": "true"})

    def _scan_report(self) -> dict:
        job = self.get_object()
        if job.kind != JobKind.CODESCAN or not job.report:
            raise NotFound("This job has no code-scan report: not a code scan, not done, or failed")
        return job.report

    @extend_schema(
        parameters=[
            OpenApiParameter(key, str, description=f"Only findings whose {key} is exactly this.")
            for key in FINDING_FILTERS
        ],
        responses=FindingSerializer(many=True),
    )
    @action(detail=True, pagination_class=FindingsPagination)
    def findings(self, request: Request, public_id: str) -> Response:
        """A code scan's findings, 100 a page (?page=N), in file order. The report lists a
        capped number per rule and in all (its findings_cap); findings_dropped_by_rule counts
        the rest, and its counts, scorecard and verdicts cover every finding."""
        page = self.paginate_queryset(findings_matching(self._scan_report(), request.query_params))
        return self.get_paginated_response(FindingSerializer(page, many=True).data)

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    @action(detail=True)
    def sarif(self, request: Request, public_id: str) -> Response:
        """The code scan as SARIF 2.1.0, results capped as the findings are; each rule's
        helpUri is its page on this host, and findings the team dismissed are suppressed."""
        self._scan_report()
        return Response(served_sarif(request, self.get_object()))
