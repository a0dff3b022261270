"""Capacity to a service-level objective: how many of which GPU serve a peak request rate
within p95 latency targets, and what that costs a month.

queueing.py holds the queueing model of one replica (a continuous-batching server with chunked
prefill under Poisson arrivals), timing.py its step times from the sizing engine, capacity.py
the plan per candidate of the engine (the most one replica serves, the replicas, the bills) and
their order, remedies.py what would meet objectives nothing meets, report.py the answer's JSON,
and assumptions.py the assumed constants and the sentences stating them. Plain Python: these
modules import the sizing engine (advisor.domain.sizing) and nothing of Django.
"""
