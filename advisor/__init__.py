"""The advisor judges: sizing a workload, right-sizing a measured job, portability verdicts.

Layers: jobs -> advisor -> catalog (an import-linter contract). The advisor reads the catalogue
through advisor.selectors and never imports jobs; its reasoning is in advisor.domain (plain
Python), its pages in views/ (forms.py, presenters.py, charts/), its API in api/."""
