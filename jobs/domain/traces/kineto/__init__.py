"""PyTorch profiler (Kineto) traces: the streaming reader (`parse`, with `bulk` runs decoded by
msgspec into `collect`'s events), HTA's step filter (`steps`) and one rank's summary (`rank`).
Imports the shared trace modules one level up, never the other formats."""
