"""`load_catalog` (the bundled specs and prices) and `refresh_prices` (one feed, or a CSV)."""
