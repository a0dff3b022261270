"""Management commands of the catalogue."""
