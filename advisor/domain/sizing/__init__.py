"""The sizing engine: architecture -> memory -> speed -> cost -> ranking.

A workload (workload.py, with its stack from stacks.py and where the team can rent from
rental.py) is sized on every GPU type and count on a layout (layout.py) by candidates.py:
memory.py (serving_memory.py: the weights as loaded, the KV cache and pool, what fits;
training_memory.py: a step's terms; both as memory_breakdown.py's lines), phases.py (the
allocated peak), speed/, slices.py for MIG; checked against what its stack runs on
(requirements.py, reading advisor/domain/compatibility), ranked (ranking.py), with the other
stacks where the chosen one does not run (other_stacks.py) and the remedies when nothing fits
(remedies.py); recommend.py joins them and report.py writes the one JSON answer."""
