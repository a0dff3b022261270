from datetime import timedelta

from rest_framework import serializers

from accounts.models import ApiToken, Membership, Team

MAX_TOKEN_LIFETIME_DAYS = 365


class TeamSerializer(serializers.ModelSerializer):
    class Meta:
        model = Team
        fields = ["id", "name", "slug", "created_at"]


class ApiTokenSerializer(serializers.ModelSerializer):
    id = serializers.UUIDField(source="public_id", read_only=True)
    user = serializers.CharField(source="user.username", read_only=True)
    team = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    expires_in_days = serializers.IntegerField(
        write_only=True,
        required=False,
        allow_null=True,
        min_value=1,
        max_value=MAX_TOKEN_LIFETIME_DAYS,
        default=90,
        help_text="Days until the token stops working; null for a token that never expires.",
    )

    class Meta:
        model = ApiToken
        fields = [
            "id",
            "name",
            "user",
            "team",
            "token_key",
            "created",
            "expiry",
            "last_used_at",
            "expires_in_days",
        ]
        read_only_fields = ["token_key", "created", "expiry", "last_used_at"]

    def expires_in(self) -> timedelta | None:
        days = self.validated_data.get("expires_in_days")
        return None if days is None else timedelta(days=days)


class CreatedApiTokenSerializer(ApiTokenSerializer):
    token = serializers.CharField(read_only=True, help_text="Shown once; store it now.")

    class Meta(ApiTokenSerializer.Meta):
        fields = [*ApiTokenSerializer.Meta.fields, "token"]


class MembershipSerializer(serializers.ModelSerializer):
    team = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    username = serializers.CharField(source="user.username", read_only=True)

    class Meta:
        model = Membership
        fields = ["id", "team", "username", "role", "created_at"]
        read_only_fields = ["created_at"]
