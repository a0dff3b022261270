"""Jobs run uploads: the Job record and its lifecycle (lifecycle.py), submission with
idempotency (services.py), the memory-capped analysis child and its protocol (runner.py), the
upload limits (limits.py), and reading the formats (jobs.domain: traces and code scans).

Layers: jobs -> advisor -> catalog. Jobs ask the advisor to judge what they read (right-sizing,
portability scorecards); nothing below imports jobs."""
