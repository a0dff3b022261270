import pytest

from catalog.services import CatalogLoadReport, catalog_load_bundled


@pytest.fixture
def catalog(db) -> CatalogLoadReport:
    """The real bundled catalogue (30 GPUs, ~1,000 offers), loaded as `make run` loads it."""
    return catalog_load_bundled()
