import pytest


@pytest.mark.django_db
def test_healthz_answers_after_a_database_round_trip(client, django_assert_num_queries):
    with django_assert_num_queries(1):
        response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok"}
