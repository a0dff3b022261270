from datetime import timedelta

from rest_framework import serializers

from accounts.models import TOKEN_LIFETIME_MAX_DAYS, ApiToken, Membership, Team
from config.api_fields import JsonTypesMixin, StringField


class TeamSerializer(JsonTypesMixin, serializers.ModelSerializer):
    """A team; its admins may change `max_token_lifetime_days` (PATCH), nothing else."""

    class Meta:
        model = Team
        fields = ["id", "name", "slug", "created_at", "max_token_lifetime_days"]
        read_only_fields = ["name", "slug", "created_at"]


class ApiTokenSerializer(JsonTypesMixin, serializers.ModelSerializer):
    id = serializers.UUIDField(source="public_id", read_only=True)
    name = StringField(max_length=100)
    user = serializers.CharField(source="user.username", read_only=True)
    team = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    expires_in_days = serializers.IntegerField(
        write_only=True,
        required=False,
        allow_null=True,
        min_value=1,
        max_value=TOKEN_LIFETIME_MAX_DAYS,
        default=90,
        help_text=(
            "Days until the token stops working; null for a token that never expires (signed-in"
            " sessions only: a token may only create tokens that expire no later than itself)."
            " The team may cap it lower (`max_token_lifetime_days`)."
        ),
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


class MembershipSerializer(JsonTypesMixin, serializers.ModelSerializer):
    team = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    username = serializers.CharField(source="user.username", read_only=True)

    class Meta:
        model = Membership
        fields = ["id", "team", "username", "role", "created_at"]
        read_only_fields = ["created_at"]
