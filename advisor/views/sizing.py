"""The sizing page: the form (validated by the API's own serializer), the ranked answer below.

GET with query parameters sizes a workload from a shareable URL. The form itself posts (it
can carry a config.json upload, which needs POST and its CSRF token); a posted bundled model
or parameter count is redirected to its GET URL, a posted config.json is answered directly.
With htmx the answer replaces only the results and the form, and the URL follows.
"""

import io
from typing import Any

from django.core.files.uploadedfile import InMemoryUploadedFile
from django.core.files.uploadhandler import FileUploadHandler
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.text import slugify
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_http_methods
from django_htmx.http import push_url

from advisor.api.serializers import MAX_CONFIG_BYTES
from advisor.comparison import COMPARE_MAX
from advisor.domain.planning.ownership import OwnershipInputs
from advisor.domain.sizing.report import DEFAULT_MAX_CANDIDATES, sizing_report
from advisor.exports import DOWNLOAD_FORMATS, answer_download
from advisor.forms import INPUT_NAMES, SOURCES, SizingForm
from advisor.ownership import sizing_rent_vs_buy
from advisor.presenters import answer_context
from advisor.services import sizing_advise

# Keys of configurations to compare read from a URL: a few past the most shown, so the page can
# say it showed the first ones; the rest of a longer list is not read.
COMPARE_KEYS_READ = COMPARE_MAX + 2


class CappedConfigUpload(FileUploadHandler):
    """Keeps no more of an upload than a config.json may hold (plus one byte, to tell), in
    memory; counts the rest so the page can say how big the file was. Nothing is written to
    disk, however large the upload."""

    def new_file(self, *args, **kwargs) -> None:
        super().new_file(*args, **kwargs)
        self.buffer = io.BytesIO()

    def receive_data_chunk(self, raw_data: bytes, start: int) -> None:
        room = MAX_CONFIG_BYTES + 1 - self.buffer.tell()
        if room > 0:
            self.buffer.write(raw_data[:room])
        return None

    def file_complete(self, file_size: int) -> InMemoryUploadedFile:
        self.buffer.seek(0)
        return InMemoryUploadedFile(
            self.buffer,
            self.field_name,
            self.file_name,
            self.content_type,
            file_size,
            self.charset,
            self.content_type_extra,
        )


@csrf_exempt
@require_http_methods(["GET", "HEAD", "POST"])
def sizing_page(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        # Before anything reads the body: an upload is kept in memory and capped.
        request.upload_handlers = [CappedConfigUpload(request)]
    return _sizing_page(request)


@csrf_protect
def _sizing_page(request: HttpRequest) -> HttpResponse:
    posted = request.method == "POST"
    submitted = posted or any(name in request.GET for name in INPUT_NAMES)
    form = SizingForm(
        (request.POST if posted else request.GET) if submitted else None,
        request.FILES if posted else None,
    )
    htmx = bool(getattr(request, "htmx", False)) and not request.htmx.history_restore_request
    context: dict[str, Any] = {"form": form, "sources": SOURCES, "submitted": submitted}
    status = 200
    if form.is_valid():
        query = form.shareable_query
        if posted and query is not None and not htmx:
            return HttpResponseRedirect(f"{reverse('advisor:sizing')}?{query}#results", status=303)
        every = request.GET.get("candidates") == "all"
        compare = [] if posted else request.GET.getlist("compare")[:COMPARE_KEYS_READ]
        report = sizing_report(
            sizing_advise(workload=form.workload),
            # A configuration picked to compare may rank past the first page of candidates.
            max_candidates=0 if every or compare else DEFAULT_MAX_CANDIDATES,
            include_rejected=True,
        )
        report["model"]["source"] = form.model_config_source
        sizing_rent_vs_buy(report, workload=form.workload, inputs=OwnershipInputs())
        download = request.GET.get("download")
        if download in DOWNLOAD_FORMATS and not posted:
            return answer_download(
                report, download, name=f"sizing-{slugify(form.workload.architecture.name)}"
            )
        context["answer"] = answer_context(report, compare=compare)
        context["share_url"] = f"{reverse('advisor:sizing')}?{query}" if query is not None else None
        if query is not None:
            # The comparison form sends the answer's own inputs again, with the rows picked.
            context["share_inputs"] = list(QueryDict(query).items())
            context["compare_keys"] = compare
        if context["share_url"] and not every:
            context["all_candidates_url"] = f"{context['share_url']}&candidates=all#candidates"
    elif submitted:
        # 422 for htmx: htmx swaps it in (see the page's htmx-config), while the debug helper
        # of django-htmx would replace the whole page on a 400.
        status = 422 if htmx else 400
    template = "advisor/_results.html" if htmx else "advisor/sizing.html"
    response = render(request, template, context, status=status)
    if htmx:
        url = context.get("share_url") if status == 200 else None
        push_url(response, url or False)
    patch_vary_headers(response, ("HX-Request",))
    return response
