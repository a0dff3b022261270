from django.db import IntegrityError
from rest_framework import mixins, status, viewsets
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.api.serializers import (
    ApiTokenSerializer,
    CreatedApiTokenSerializer,
    MembershipSerializer,
    MembershipUpdateSerializer,
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


class MembershipViewSet(TeamScopedMixin, viewsets.ModelViewSet):
    """Members of the caller's teams. Team admins add (to the caller's active team), change
    roles and remove; members may only look, or remove themselves."""

    queryset = Membership.objects.select_related("team", "user")
    permission_classes = [IsAuthenticated]

    def get_serializer_class(self):
        return MembershipUpdateSerializer if self.action in {"update", "partial_update"} else (
            MembershipSerializer
        )

    def _require_admin(self, team_id: int) -> None:
        if team_id not in request_admin_team_ids(self.request):
            raise PermissionDenied("Only a team admin can do this.")

    def perform_create(self, serializer: MembershipSerializer) -> None:
        team = request_active_team(self.request)
        self._require_admin(team.pk)
        try:
            serializer.save(team=team)
        except IntegrityError as error:
            raise ValidationError({"username": ["Already a member of this team."]}) from error

    def perform_update(self, serializer: MembershipSerializer) -> None:
        self._require_admin(serializer.instance.team_id)
        serializer.save()

    def perform_destroy(self, instance: Membership) -> None:
        if instance.user_id != self.request.user.pk:
            self._require_admin(instance.team_id)
        instance.delete()
