from rest_framework import mixins, status, viewsets
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

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
from accounts.services import api_token_create, api_token_revoke, api_tokens_visible


class TeamViewSet(viewsets.ReadOnlyModelViewSet):
    """The caller's teams (a token sees only its own)."""

    serializer_class = TeamSerializer
    permission_classes = [IsAuthenticated]

    def get_queryset(self):
        return Team.objects.filter(pk__in=request_team_ids(self.request))


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

    def create(self, request: Request, *args, **kwargs) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        token, raw = api_token_create(
            user=request.user,
            team=request_active_team(request),
            name=serializer.validated_data["name"],
            expires_in=serializer.expires_in(),
        )
        token.token = raw
        return Response(CreatedApiTokenSerializer(token).data, status=status.HTTP_201_CREATED)

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
    leave. Adding people is for staff (in the admin): an "add by username" endpoint would let
    any team admin probe which usernames exist."""

    queryset = Membership.objects.select_related("team", "user")
    serializer_class = MembershipSerializer
    permission_classes = [IsAuthenticated]

    def _require_admin(self, team_id: int) -> None:
        if team_id not in request_admin_team_ids(self.request):
            raise PermissionDenied("Only a team admin can do this.")

    def perform_update(self, serializer: MembershipSerializer) -> None:
        self._require_admin(serializer.instance.team_id)
        serializer.save()

    def perform_destroy(self, instance: Membership) -> None:
        if instance.user_id != self.request.user.pk:
            self._require_admin(instance.team_id)
        instance.delete()
