from django import forms
from django.conf import settings

from jobs.limits import MAX_FILES, TOO_MANY_FILES


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("widget", MultipleFileInput(attrs={"multiple": True}))
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        uploads = [
            upload for upload in (data if isinstance(data, list | tuple) else [data]) if upload
        ]
        if not uploads:
            raise forms.ValidationError(self.error_messages["required"], code="required")
        return [super(MultipleFileField, self).clean(upload, initial) for upload in uploads]


class TraceUploadForm(forms.Form):
    files = MultipleFileField(
        label="Trace files",
        help_text=(
            "PyTorch profiler (Kineto) traces (.json or .json.gz, one per rank, or a .zip), an "
            "Nsight Systems SQLite export (nsys export --type sqlite), or an nvidia-smi CSV log "
            "(--query-gpu=timestamp,name,index,utilization.gpu,utilization.memory,memory.used,"
            "memory.total,power.draw --format=csv -l 1). Several files make one job."
        ),
    )

    def clean_files(self):
        uploads = self.cleaned_data["files"]
        if len(uploads) > MAX_FILES:
            raise forms.ValidationError(TOO_MANY_FILES)
        total = sum(upload.size for upload in uploads)
        if total > settings.JOB_UPLOAD_MAX_BYTES:
            raise forms.ValidationError(
                f"{total:,} bytes in all; the limit is {settings.JOB_UPLOAD_MAX_BYTES:,} bytes."
            )
        return uploads


class CodeUploadForm(TraceUploadForm):
    files = MultipleFileField(
        label="Code",
        help_text=(
            "A .zip or .tar.gz of the repository (read in memory, never unpacked to disk), or "
            "single source files: .py, .cu, .cuh, .cpp, .h, CMakeLists.txt, setup.py, "
            "requirements.txt, Dockerfile..."
        ),
    )
