"""The REST API of teams, memberships and tokens: thin viewsets and serializers over
accounts.services (writes) and accounts.scoping (who sees what)."""
