"""Clients for the advisor's API and pages, over the bundled catalogue."""

import pytest
from django.test import Client
from rest_framework.test import APIClient


@pytest.fixture
def api(catalog) -> APIClient:
    return APIClient()


@pytest.fixture
def web(catalog) -> Client:
    return Client()
