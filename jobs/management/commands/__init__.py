"""`analyze_trace` and `scan_code`: the same analyses as the workers, synchronously, for CI."""
