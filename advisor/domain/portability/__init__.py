"""Portability knowledge in one place (no Django): the four questions and the targets
(questions.py), the rule catalogue and what each rule decides per target (rules.py), the
scorecard and verdict shape a code scan and the questionnaire share (scorecard.py), and the
questionnaire (questionnaire.py)."""
