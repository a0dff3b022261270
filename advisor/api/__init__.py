"""The advice API (/api/v1/advice/...): sizing, the bundled models and the portability
questionnaire; serializers hold the one set of input rules the page and `size` use too
(rental_fields.py: where a team can rent, and how much of the answer to list)."""
