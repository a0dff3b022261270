"""The jobs API (/api/v1/jobs/): submit (multipart, Idempotency-Key), poll, and a code scan's
findings and SARIF, scoped to the caller's team."""
