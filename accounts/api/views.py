from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings

from accounts.api.serializers import (
    ApiTokenSerializer,
    CreatedApiTokenSerializer,
    MembershipSerializer,
    TeamSerializer,
)
from accounts.models import ApiToken, Membership, Team
from accounts.scoping import (
    TeamScopedMixin,
    request_active_team,
    request_admin_team_ids,
    request_team_ids,
)
from accounts.services import (
    Refused,
    api_token_create,
    api_token_revoke,
    api_tokens_visible,
    membership_delete,
    membership_role_set,
    team_token_lifetime_cap_set,
)
from accounts.throttling import TokenCreateThrottle


def _bad_request(error: Refused) -> ValidationError:
    return ValidationError({error.field or api_settings.NON_FIELD_ERRORS_KEY: [error.reason]})


def _require_team_admin(request: Request, team_id: int) -> None:
    if team_id not in request_admin_team_ids(request):
        raise PermissionDenied("Only a team admin can do this.")


class TeamViewSet(mixins.UpdateModelMixin, viewsets.ReadOnlyModelViewSet):
    """The caller's teams (a token sees only its own). A team admin may PATCH
    `max_token_lifetime_days` (null for no cap); live tokens past a new cap are cut to it."""

    serializer_class = TeamSerializer
    permission_classes = [IsAuthenticated]
    http_method_names = ["get", "patch", "head", "options"]

    def get_queryset(self):
        return Team.objects.filter(pk__in=request_team_ids(self.request))

    def perform_update(self, serializer: TeamSerializer) -> None:
        team = serializer.instance
        _require_team_admin(self.request, team.pk)
        if "max_token_lifetime_days" in serializer.validated_data:
            try:
                team_token_lifetime_cap_set(
                    team=team, max_days=serializer.validated_data["max_token_lifetime_days"]
                )
            except Refused as error:
                raise _bad_request(error) from error


class ApiTokenViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """API tokens: create (the raw token is returned once), list, revoke (DELETE)."""

    serializer_class = ApiTokenSerializer
    permission_classes = [IsAuthenticated]
    lookup_field = "public_id"

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # schema generation has no user
            return ApiToken.objects.none()
        return api_tokens_visible(
            user=self.request.user,
            team_ids=request_team_ids(self.request),
            admin_team_ids=request_admin_team_ids(self.request),
        )

    def get_throttles(self) -> list:
        throttles = super().get_throttles()
        if self.action == "create":
            throttles.append(TokenCreateThrottle())
        return throttles

    def create(self, request: Request, *args, **kwargs) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            token, raw = api_token_create(
                user=request.user,
                team=request_active_team(request),
                name=serializer.validated_data["name"],
                expires_in=serializer.expires_in(),
                created_with=request.auth if isinstance(request.auth, ApiToken) else None,
            )
        except Refused as error:
            raise _bad_request(error) from error
        except PermissionError as error:
            raise PermissionDenied("You are not a member of this team.") from error
        token.token = raw
        return Response(CreatedApiTokenSerializer(token).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        description=(
            "Revoke a token: it stops working at once. A token may revoke itself (send its own "
            "`public_id`): this answer is its last, and every later request with it is a 401. "
            "Keep a second token if a script must go on."
        )
    )
    def destroy(self, request: Request, *args, **kwargs) -> Response:
        return super().destroy(request, *args, **kwargs)

    def perform_destroy(self, instance: ApiToken) -> None:
        api_token_revoke(token=instance)


class MembershipViewSet(
    TeamScopedMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """Members of the caller's teams. Team admins change roles and remove members; anyone may
    leave. A team's only admin cannot be demoted or removed (except by staff). A removed member's
    tokens of the team are revoked. Adding people is for staff (in the admin): an "add by
    username" endpoint would let any team admin probe which usernames exist."""

    queryset = Membership.objects.select_related("team", "user")
    serializer_class = MembershipSerializer
    permission_classes = [IsAuthenticated]

    def perform_update(self, serializer: MembershipSerializer) -> None:
        membership = serializer.instance
        _require_team_admin(self.request, membership.team_id)
        try:
            membership_role_set(
                membership=membership,
                role=serializer.validated_data.get("role", membership.role),
                actor_is_staff=self.request.user.is_staff,
            )
        except Refused as error:
            raise _bad_request(error) from error

    def perform_destroy(self, instance: Membership) -> None:
        if instance.user_id != self.request.user.pk:
            _require_team_admin(self.request, instance.team_id)
        try:
            membership_delete(membership=instance, actor_is_staff=self.request.user.is_staff)
        except Refused as error:
            raise _bad_request(error) from error
