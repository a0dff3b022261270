"""Writes of the MIG profile table: the bundled file is the whole truth for the GPUs it names."""

from collections.abc import Iterable
from dataclasses import fields

from django.db import transaction

from catalog.domain.mig import MigProfileError, MigProfileSpec
from catalog.models import Gpu, MigProfile
from catalog.services.offers import UpsertCounts

_COPIED = [f.name for f in fields(MigProfileSpec) if f.name not in {"gpu_key", "profile"}]


@transaction.atomic
def mig_profiles_upsert(*, specs: Iterable[MigProfileSpec]) -> UpsertCounts:
    """Create or update every listed profile; a GPU's profiles the file no longer lists are
    deleted. A row naming a GPU the catalogue lacks is refused, not skipped."""
    specs = list(specs)
    gpu_ids = dict(Gpu.objects.values_list("canonical_key", "id"))
    unknown = sorted({spec.gpu_key for spec in specs} - set(gpu_ids))
    if unknown:
        raise MigProfileError(f"MIG profiles for GPUs not in the catalogue: {', '.join(unknown)}")
    counts = UpsertCounts()
    existing = {
        (row.gpu_id, row.profile): row
        for row in MigProfile.objects.filter(gpu_id__in={gpu_ids[s.gpu_key] for s in specs})
    }
    kept = set()
    for spec in specs:
        key = (gpu_ids[spec.gpu_key], spec.profile)
        kept.add(key)
        values = {name: getattr(spec, name) for name in _COPIED}
        row = existing.get(key)
        if row is None:
            MigProfile.objects.create(gpu_id=key[0], profile=spec.profile, **values)
            counts.created += 1
        elif any(getattr(row, name) != value for name, value in values.items()):
            for name, value in values.items():
                setattr(row, name, value)
            row.save()
            counts.updated += 1
        else:
            counts.unchanged += 1
    stale = [row.pk for key, row in existing.items() if key not in kept]
    MigProfile.objects.filter(pk__in=stale).delete()
    return counts
