import pytest

from tests.helpers import TeamSetup, make_team


@pytest.fixture
def team(db) -> TeamSetup:
    return make_team("Alpha")
