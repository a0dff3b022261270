from io import StringIO

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.core.management import call_command

from accounts.models import Membership


def run() -> str:
    out = StringIO()
    call_command("ensure_admin", stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_first_start_creates_an_admin_in_a_team_and_prints_a_working_password(rf):
    output = run()
    password = output.split("with password '")[1].split("'")[0]
    user = get_user_model().objects.get(username="admin")
    assert user.is_superuser and user.is_staff
    assert authenticate(rf.get("/"), username="admin", password=password) == user
    assert Membership.objects.get(user=user).role == Membership.Role.ADMIN


@pytest.mark.django_db
def test_second_start_creates_nothing_and_says_how_to_reset():
    run()
    output = run()
    assert "exists" in output and "changepassword admin" in output
    assert get_user_model().objects.count() == 1
