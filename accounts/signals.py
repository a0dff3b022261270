"""A member who leaves a team takes their tokens of that team with them, however they leave:
the API, the Django admin, or a cascade (their user deleted). Authentication checks
membership as well, so a removal that bypasses signals (raw SQL) still locks the token out."""

from django.db.models.signals import post_delete
from django.dispatch import receiver

from accounts.models import Membership
from accounts.services import api_tokens_of_membership_revoke


@receiver(post_delete, sender=Membership, dispatch_uid="accounts.membership_tokens_revoke")
def membership_tokens_revoke(sender, instance: Membership, **kwargs) -> None:
    api_tokens_of_membership_revoke(user_id=instance.user_id, team_id=instance.team_id)
