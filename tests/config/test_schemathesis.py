"""Schemathesis against the live OpenAPI schema (GET /api/schema/), in the normal pytest run.

Every operation gets requests that fit the schema and requests that break it, sent through the
WSGI application with a team member's API token. Each answer must be no 5xx, a documented
status code and content type, a body that matches the documented schema, a 4xx for a request
that breaks the schema, and a 2xx (or a documented refusal such as 404) for one that fits it.

Bounded: 25 generated examples per operation plus schemathesis' deterministic coverage cases,
a fixed seed with derandomized generation (the same requests on every run), no example
database, and a time budget for the whole module. An outside run takes another seed and more
examples from the environment (the budget grows with them):
`SCHEMATHESIS_SEED=7 SCHEMATHESIS_EXAMPLES=150 .venv/bin/pytest tests/config/test_schemathesis.py`.

No operation is left out. DELETE /api/v1/tokens/{public_id}/ runs too: it is sent random ids,
and each operation gets a team and token of its own. A token may revoke itself (the schema
says so), and the member may leave the team through DELETE /api/v1/memberships/{id}/: before
each request the run checks that its token still acts and otherwise mints a spare one, so such
a call cannot blind the rest of the run with 401s.
"""

import os
import time
from datetime import timedelta

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings

from accounts.models import ApiToken, Membership
from accounts.services import api_token_create
from config.wsgi import application
from tests.helpers import make_team

EXAMPLES_PER_OPERATION = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "25"))
SEED = int(os.environ.get("SCHEMATHESIS_SEED", "20261201"))
# A bound on the whole run, so that an operation that hangs cannot hold CI for its 90 minutes:
# not a speed check (the run takes 100-150 s on 2 cores, more when the machine is shared).
TIME_BUDGET_S = 300.0 * max(1.0, EXAMPLES_PER_OPERATION / 25)

# Checks turned off for one operation, each with its reason. "positive_data_acceptance" is
# off where a rule depends on data or on other fields, which a schema cannot state, so a
# schema-valid request may rightly be a 400; every other check still runs there.
RELAXED_CHECKS = {
    # Exactly one of model, config or params; a workload must fit its architecture.
    "v1_advice_sizing_create": ["positive_data_acceptance"],
    # `gpu` and `provider` take keys that exist in the catalogue.
    "v1_offers_list": ["positive_data_acceptance"],
    # A new token may not outlive the token that creates it, nor the team's lifetime policy.
    "v1_tokens_create": ["positive_data_acceptance"],
    # The WSGI transport encodes an empty file part with no line break before the next
    # boundary; Django's multipart parser then sees a part with no body and drops it, so the
    # "empty file" never arrives. Sent as HTTP clients send it, an empty file part is a 400
    # (tests/jobs/test_upload_limits.py::test_an_empty_file_among_others_is_refused).
    "v1_jobs_create": ["negative_data_rejection"],
    # As sizing: exactly one of model, config or params; the prompt must fit the model.
    "v1_advice_capacity_create": ["positive_data_acceptance"],
}
# Operations that run fewer examples, each with its reason. A capacity plan queues every
# candidate GPU and layout (about 2 s a request here, 14 s at extreme loads): a few generated
# examples, without the coverage phase's every-boundary sweep, keep the run inside its bound;
# tests/advisor/test_capacity_api.py holds each field's refusals.
FEWER_EXAMPLES = {"v1_advice_capacity_create": 5}

CONFIG = schemathesis.Config.from_dict(
    {
        "seed": SEED,
        "generation": {
            "max-examples": EXAMPLES_PER_OPERATION,
            "deterministic": True,
            "database": "none",
        },
        "operations": [
            {
                "include-operation-id": operation_id,
                "checks": {
                    check: {"enabled": False} for check in RELAXED_CHECKS.get(operation_id, [])
                },
                **(
                    {
                        "generation": {"max-examples": FEWER_EXAMPLES[operation_id]},
                        # The coverage phase sends every boundary of every field, whatever
                        # max-examples says: dozens of full plans.
                        "phases": {"coverage": {"enabled": False}},
                    }
                    if operation_id in FEWER_EXAMPLES
                    else {}
                ),
            }
            for operation_id in {**RELAXED_CHECKS, **FEWER_EXAMPLES}
        ],
    }
)
# Loading the schema makes no database query: the catalogue and the token come per test below.
schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", application, config=CONFIG)

_started_at: list[float] = []


class SpareTokens:
    """The member's token, and a fresh one whenever a request revoked it or removed the member
    from the team."""

    def __init__(self, team) -> None:
        self._team = team
        self._token, self._raw = team.member_token, team.member_raw_token

    def current(self) -> str:
        acts = (
            ApiToken.objects.filter(pk=self._token.pk).exists()
            and Membership.objects.filter(team=self._team.team, user=self._team.member).exists()
        )
        if not acts:
            Membership.objects.get_or_create(
                team=self._team.team,
                user=self._team.member,
                defaults={"role": Membership.Role.MEMBER},
            )
            self._token, self._raw = api_token_create(
                user=self._team.member,
                team=self._team.team,
                name="spare",
                expires_in=timedelta(days=30),
            )
        return self._raw


@pytest.fixture
def member_token(bundled_catalog, db, tmp_path, settings) -> SpareTokens:
    """A member's API token, in a team of its own for each operation (so a DELETE that makes
    the member leave the team affects that operation only), uploads in a temporary folder.

    The WSGI handler would close the database connection at each request's start and end,
    which inside the test's transaction breaks it; Django's own test client stops that the
    same way."""
    if not _started_at:
        _started_at.append(time.monotonic())
    elapsed_s = time.monotonic() - _started_at[0]
    if elapsed_s > TIME_BUDGET_S:
        pytest.fail(
            f"the schemathesis run took over {TIME_BUDGET_S:.0f} s ({elapsed_s:.0f} s so far): "
            "lower EXAMPLES_PER_OPERATION or make the slow operation faster"
        )
    settings.MEDIA_ROOT = tmp_path
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield SpareTokens(make_team("Alpha"))
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def call_and_validate(case, tokens: SpareTokens) -> None:
    case.call_and_validate(headers={"Authorization": f"Token {tokens.current()}"})


# Examples of one operation share its fixture's data (the team, tokens it created), which is
# intended: state only accumulates the way it would for a real client.
@schema.parametrize()
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_api_conforms_to_its_schema(case, member_token):
    call_and_validate(case, member_token)


def test_a_token_that_revoked_itself_leaves_the_run_a_spare(member_token):
    from tests.helpers import token_client

    raw = member_token.current()
    api = token_client(raw)
    [own] = [
        t["id"] for t in api.get("/api/v1/tokens/").json()["results"] if t["name"] == "member tool"
    ]
    assert api.delete(f"/api/v1/tokens/{own}/").status_code == 204
    assert api.get("/api/v1/teams/").status_code == 401
    spare = member_token.current()
    assert spare != raw and token_client(spare).get("/api/v1/teams/").status_code == 200


def test_the_schema_says_a_token_may_revoke_itself(client, db):
    schema = client.get("/api/schema/", {"format": "json"}).json()
    delete = schema["paths"]["/api/v1/tokens/{public_id}/"]["delete"]
    assert "may revoke itself" in delete["description"]
