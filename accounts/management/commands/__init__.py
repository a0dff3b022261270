"""`ensure_admin`: the first admin user and team of `make run`."""
