"""Advisor reasoning as plain Python: the one Device and Offer, sizing, right-sizing and
portability. No Django here."""
