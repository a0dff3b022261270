"""The advisor's pages: sizing a workload (sizing) and the portability questionnaire
(portability)."""
