"""Catalogue facts as plain Python: GPU specs, price quotes, name matching. No Django here."""
