"""Two teams, each with an admin and a member, and an API token per person."""

import pytest

from tests.helpers import TeamSetup, make_team


@pytest.fixture
def team_a(db) -> TeamSetup:
    return make_team("Alpha")


@pytest.fixture
def team_b(db) -> TeamSetup:
    return make_team("Bravo")
