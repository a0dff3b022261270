from django.conf import settings
from rest_framework import serializers

from jobs.models import Job, JobFile, JobKind

MAX_FILES = 64


class JobFileSerializer(serializers.ModelSerializer):
    class Meta:
        model = JobFile
        fields = ["name", "sha256", "size_bytes"]


class JobSerializer(serializers.ModelSerializer):
    id = serializers.UUIDField(source="public_id", read_only=True)
    team = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    created_by = serializers.CharField(source="created_by.username", read_only=True, default=None)
    files = JobFileSerializer(many=True, read_only=True)
    reused_from = serializers.UUIDField(
        source="reused_from.public_id", read_only=True, default=None
    )
    url = serializers.HyperlinkedIdentityField(view_name="api:job-detail", lookup_field="public_id")

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
            "report",
        ]
        read_only_fields = fields


class JobSummarySerializer(JobSerializer):
    class Meta(JobSerializer.Meta):
        fields = [f for f in JobSerializer.Meta.fields if f != "report"]
        read_only_fields = fields


class JobSubmitSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=JobKind.choices)
    files = serializers.ListField(
        child=serializers.FileField(allow_empty_file=False), min_length=1, max_length=MAX_FILES
    )

    def validate_files(self, uploads):
        total = sum(upload.size for upload in uploads)
        if total > settings.JOB_UPLOAD_MAX_BYTES:
            raise serializers.ValidationError(
                f"{total:,} bytes in all, over the {settings.JOB_UPLOAD_MAX_BYTES:,}-byte limit"
            )
        return uploads
