"""Job reasoning as plain Python: trace analysis and (later) other job kinds. No Django here."""
