"""The catalogue API (/api/v1/gpus/, /api/v1/offers/): read-only viewsets over the FilterSets
the pages share (catalog.filters)."""
