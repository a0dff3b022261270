"""Users, teams, memberships and API tokens, and the team boundary every private lookup goes
through (scoping.py). May import Django, DRF and knox; imports no other app of ours: everyone
scopes by team through it."""
