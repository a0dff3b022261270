"""Advisor reasoning as plain Python: the one Device and Offer (devices.py), Range (ranges.py),
sizing/, rightsizing/ and portability/. Imports no Django, DRF or Celery, and nothing of jobs:
it takes and returns dataclasses (import-linter holds both)."""
