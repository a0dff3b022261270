"""Nsight Systems SQLite exports: a read-only, deadline-bound database (`sqlite_guard`), the
tables we trust (`schema`) and the rank summaries read from them (`export`). Imports the shared
trace modules one level up, never the other formats."""
