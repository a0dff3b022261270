"""Management commands of the advisor."""
