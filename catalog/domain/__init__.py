"""Catalogue facts as plain Python: GPU specs, price quotes, name matching, batch validation, and
the one JSON depth limit every parser of the app uses. Imports no Django and no other package of
ours."""
