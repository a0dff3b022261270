"""Advisor reasoning as plain Python: sizing and (later) portability. No Django here."""
