"""SizingForm (advisor/forms.py) keeps no rules of its own: its ranges and choices are the
serializer's, its refusals are the serializer's words, its workload is the serializer's.

Before the refactor the page's own field framework lived in advisor/views.py; these tests
failed there (no advisor.forms) and pass with SizingForm.
"""

import pytest
from django.http import QueryDict
from rest_framework import serializers
from rest_framework.test import APIClient

from advisor.api.serializers import SizingRequestSerializer
from advisor.domain.sizing.bundled_models import bundled_models
from advisor.forms import FIELD_NAMES, SizingForm

API = "/api/v1/advice/sizing"


def form_for(query: str) -> SizingForm:
    return SizingForm(QueryDict(query))


def test_the_forms_ranges_and_choices_are_the_serializers():
    rules = SizingRequestSerializer().fields
    form = SizingForm()
    for name in FIELD_NAMES:
        field, rule = form.fields[name], rules.get(name)
        assert field.min_value == getattr(rule, "min_value", None), name
        assert field.max_value == getattr(rule, "max_value", None), name
        if isinstance(rule, serializers.ChoiceField) and name != "model":
            values = [value for value, _ in field.options if value != ""]
            assert values == [str(choice) for choice in rule.choices], name
    suggested = {value for value, _ in form.fields["model"].suggestions}
    assert suggested == {m.slug for m in bundled_models().values()} | {
        m.hf_id for m in bundled_models().values()
    }


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("model=llama-3.1-8b&context_tokens=0", "context_tokens"),
        ("model=llama-3.1-8b&batch_size=abc", "batch_size"),
        ("model=llama-3.1-8b&zero_stage=7", "zero_stage"),
        ("model=llama-3.1-8b&gradient_checkpointing=maybe", "gradient_checkpointing"),
        ("model=nonexistent", "model"),
        ("source=params&params=5", "params"),
    ],
)
@pytest.mark.django_db
def test_the_form_refuses_with_the_apis_words(query, field):
    form = form_for(query)
    assert not form.is_valid()
    body = {name: value for name, value in QueryDict(query).items() if name != "source"}
    # Posted as text fields, as the page posts them (a JSON body must carry JSON types).
    api = APIClient().post(API, body, format="multipart")
    assert api.status_code == 400
    assert form.errors[field] == api.json()[field]


def test_lora_targets_too_long_are_refused_with_the_serializers_words():
    form = form_for("model=llama-3.1-8b&task=lora&lora_targets=" + "x" * 70)
    assert not form.is_valid()
    assert form.errors["lora_targets"] == ["Ensure this field has no more than 64 characters."]


def test_a_valid_form_carries_the_serializers_workload():
    form = form_for("model=llama-3.1-8b&task=lora&lora_targets=q_proj,%20v_proj&batch_size=4")
    assert form.is_valid(), form.errors
    serializer = SizingRequestSerializer(
        data={
            "model": "llama-3.1-8b",
            "task": "lora",
            "lora_targets": ["q_proj", "v_proj"],
            "batch_size": 4,
        }
    )
    assert serializer.is_valid(), serializer.errors
    assert form.workload == serializer.validated_data["workload"]
    assert form.shareable_query == (
        "model=llama-3.1-8b&task=lora&batch_size=4&lora_targets=q_proj%2C+v_proj"
    )


def test_an_unbound_form_shows_the_serializer_defaults_and_refuses_nothing():
    form = SizingForm()
    assert not form.is_bound and not form.errors and form.error_count == 0
    # No default of its own: the model's (4,096, or its positions when fewer) is derived later.
    assert SizingRequestSerializer().fields["context_tokens"].default is serializers.empty
    assert form["context_tokens"].value() == ""
    assert form["gradient_checkpointing"].value() == "true"
    assert form.model_source == "model"


def test_the_page_sizes_a_quantised_checkpoint_as_stored_unless_a_precision_is_chosen():
    """The page always sent its default weight precision, so gpt-oss was never sized at its
    MXFP4 experts there while the API did: an empty choice now means "as stored"."""
    as_stored = form_for("model=gpt-oss-20b")
    chosen = form_for("model=gpt-oss-20b&weight_dtype=bf16")
    assert as_stored.is_valid(), as_stored.errors
    assert chosen.is_valid(), chosen.errors
    assert as_stored.workload.weights_as_stored and not chosen.workload.weights_as_stored
    assert as_stored["weight_dtype"].value() == ""


def test_training_tokens_may_be_written_as_2e12(catalog):
    from django.test import Client

    response = Client().get(
        "/size/", {"model": "llama-3.1-8b", "task": "pretrain", "train_tokens": "2e12"}
    )
    assert response.status_code == 200
    assert "2,000,000,000,000 training tokens" in response.content.decode()
