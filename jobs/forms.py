from django import forms

from jobs.limits import UploadRefused, uploads_check


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
        try:
            uploads_check(uploads)
        except UploadRefused as refused:
            raise forms.ValidationError(str(refused)) from refused
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
