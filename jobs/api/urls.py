from jobs.api.views import JobViewSet

routes = [("jobs", JobViewSet, "job")]
