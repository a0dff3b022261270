"""Portability knowledge in one place (no Django): the four questions and the targets
(questions.py); the rule catalogue (rule.py says what a rule is, rules.py lists them, with
stack_rules.py's); what each rule's finding decides per target and the stack facts a team can
state (decisions.py); the scorecard and verdict shape a code scan and the questionnaire share
(scorecard.py); and the questionnaire (questionnaire.py).

It may import the standard library and its own modules only: the code scanner
(jobs/domain/codescan) and the advisor's views import it, never the other way."""
