"""Portability knowledge: the questionnaire's scorecard and per-target verdicts (no Django)."""
