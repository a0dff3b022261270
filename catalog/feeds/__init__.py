"""Price sources. Each module turns one source's format into PriceQuote dataclasses."""
