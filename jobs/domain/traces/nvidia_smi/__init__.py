"""nvidia-smi CSV logs: the CSV reader (`csv_log`) and the per-GPU summaries (`log`). Imports
the shared trace modules one level up, never the other formats."""
