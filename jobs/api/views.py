from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.scoping import TeamScopedMixin, request_active_team
from jobs.api.serializers import JobSerializer, JobSubmitSerializer, JobSummarySerializer
from jobs.models import Job
from jobs.services import job_submit


class JobViewSet(
    TeamScopedMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    """The team's jobs. POST multipart `kind` and one or more `files`; poll the job until its
    status is done (with its report) or failed (with an error a person can act on)."""

    queryset = Job.objects.select_related("team", "created_by", "reused_from").prefetch_related(
        "files"
    )
    permission_classes = [IsAuthenticated]
    lookup_field = "public_id"
    parser_classes = [MultiPartParser, FormParser]

    def get_serializer_class(self):
        if self.action == "create":
            return JobSubmitSerializer
        return JobSummarySerializer if self.action == "list" else JobSerializer

    @extend_schema(request=JobSubmitSerializer, responses={201: JobSerializer})
    def create(self, request: Request, *args, **kwargs) -> Response:
        serializer = JobSubmitSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        job = job_submit(
            team=request_active_team(request),
            user=request.user,
            kind=serializer.validated_data["kind"],
            uploads=serializer.validated_data["files"],
        )
        body = JobSerializer(job, context={"request": request}).data
        return Response(body, status=status.HTTP_201_CREATED)
