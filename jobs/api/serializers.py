from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from jobs.limits import MAX_FILES, TOO_MANY_FILES, UploadRefused, uploads_check
from jobs.models import Job, JobFile, JobKind


class JobFileSerializer(serializers.ModelSerializer):
    class Meta:
        model = JobFile
        fields = ["name", "sha256", "size_bytes"]


class JobSerializer(serializers.ModelSerializer):
    id = serializers.UUIDField(source="public_id", read_only=True)
    team = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    # Null once the user is deleted, and for a job that reused no report: the schema says so.
    created_by = serializers.CharField(
        source="created_by.username", read_only=True, default=None, allow_null=True
    )
    files = JobFileSerializer(many=True, read_only=True)
    reused_from = serializers.UUIDField(
        source="reused_from.public_id", read_only=True, default=None, allow_null=True
    )
    url = serializers.HyperlinkedIdentityField(view_name="api:job-detail", lookup_field="public_id")
    findings_url = serializers.SerializerMethodField(
        help_text="A code scan's findings, paged (?page=N) and filtered; null for traces."
    )
    sarif_url = serializers.SerializerMethodField(
        help_text="A code scan's SARIF 2.1.0 report; null for traces."
    )

    class Meta:
        model = Job
        fields = [
            "id",
            "url",
            "team",
            "created_by",
            "kind",
            "status",
            "progress_pct",
            "stage",
            "error",
            "attempts",
            "files",
            "reused_from",
            "created_at",
            "started_at",
            "finished_at",
            "findings_url",
            "sarif_url",
            "report",
        ]
        read_only_fields = fields

    # A code scan's report leaves these out: its findings are paged at findings_url and its
    # SARIF (the findings again) is at sarif_url, so a job stays a few kilobytes to poll.
    REPORT_KEYS_ELSEWHERE = ("findings", "sarif")

    def _scan_link(self, job: Job, view_name: str) -> str | None:
        if job.kind != JobKind.CODESCAN:
            return None
        path = reverse(view_name, kwargs={"public_id": job.public_id})
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request else path

    def get_findings_url(self, job: Job) -> str | None:
        return self._scan_link(job, "api:job-findings")

    def get_sarif_url(self, job: Job) -> str | None:
        return self._scan_link(job, "api:job-sarif")

    def to_representation(self, instance: Job) -> dict:
        data = super().to_representation(instance)
        report = data.get("report")
        if instance.kind == JobKind.CODESCAN and report:
            data["report"] = {
                key: value for key, value in report.items() if key not in self.REPORT_KEYS_ELSEWHERE
            }
        return data


class FindingSerializer(serializers.Serializer):
    """One finding of a code scan (jobs.domain.codescan.Finding)."""

    rule_id = serializers.CharField()
    category = serializers.CharField()
    severity = serializers.CharField()
    file = serializers.CharField(help_text="Relative to the upload's root, posix separators.")
    line = serializers.IntegerField(help_text="1-based.")
    column = serializers.IntegerField(help_text="1-based, in characters.")
    code = serializers.CharField()
    reason = serializers.CharField()
    alternative = serializers.CharField()
    context = serializers.CharField(required=False, default="")


class JobSummarySerializer(JobSerializer):
    class Meta(JobSerializer.Meta):
        fields = [f for f in JobSerializer.Meta.fields if f != "report"]
        read_only_fields = fields


@extend_schema_field(
    {
        "type": "array",
        "items": {"type": "string", "format": "binary", "minLength": 1},  # no empty files
        "minItems": 1,
        "maxItems": MAX_FILES,
        "description": "One part per file, each named `files`.",
    }
)
class UploadedFilesField(serializers.ListField):
    """Files sent as multipart parts: binary in the schema, where a plain ListField of
    FileFields would read as a list of URIs that no generated client could upload."""


class JobSubmitSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(
        choices=JobKind.choices,
        error_messages={
            "invalid_choice": '"{input}" is not a kind of job: choose '
            + " or ".join(f"{value} ({label})" for value, label in JobKind.choices)
            + "."
        },
    )
    files = UploadedFilesField(
        child=serializers.FileField(allow_empty_file=False),
        min_length=1,
        max_length=MAX_FILES,
        error_messages={"max_length": TOO_MANY_FILES},
    )

    def validate_files(self, uploads):
        try:
            uploads_check(uploads)
        except UploadRefused as refused:
            raise serializers.ValidationError(str(refused)) from refused
        return uploads
