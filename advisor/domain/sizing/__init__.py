"""The sizing engine: architecture -> memory -> speed -> cost -> ranking.

A workload (workload.py, with its stack from stacks.py and where the team can rent from
rental.py) is sized on every GPU type and count (candidates.py: memory, serving_fit and
kv_pool, phases, speed/, slices for MIG), checked against what its stack runs on
(requirements.py, reading advisor/domain/compatibility), ranked (ranking.py), with the other
stacks where the chosen one does not run (other_stacks.py) and the remedies when nothing fits
(remedies.py); recommend.py joins them and report.py writes the one JSON answer."""
