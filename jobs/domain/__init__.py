"""Reading uploads as plain Python: traces/ (Kineto, Nsight Systems, nvidia-smi) and codescan/
(archives, tree-sitter detectors, SARIF). No Django, DRF or Celery; may import advisor.domain
(the portability rules and scorecard) and catalog.domain."""
