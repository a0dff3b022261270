"""gunicorn's settings for every way the app is served (`make run`, the Docker image, compose,
the benchmarks): read from the working directory, overridable on the command line.

limit_request_line: a request line (method, path and query string) over 8,190 bytes is answered
by gunicorn itself with its HTML 414, before the app sees it (the schema documents it). 8,190 is
gunicorn's ceiling for the setting and the size of nginx's default header buffer, twice
gunicorn's default; the app's longest links (a sizing answer with every field set, a filtered
offer list) stay under 3 KB.
"""

limit_request_line = 8190

# A capacity plan of very short requests at a high rate takes the planner up to ~30 s on one
# core (every candidate's queue solved at many rates); gunicorn's default 30 s would kill the
# worker mid-answer. Two minutes bounds a stuck worker without cutting a slow plan short.
timeout = 120
