"""What `plan` and `size` print for a refused request: every nested message with its path,
and a message that already names its field not named twice."""

from advisor.management.command_errors import serializer_errors_text


def test_nested_messages_keep_their_path_and_their_words():
    errors = {
        "ownership": {"pue": ["Ensure this value is less than or equal to 3.0."]},
        "hourly_requests_per_second": {23: ["Ensure this value is greater than or equal to 0."]},
    }
    assert serializer_errors_text(errors) == (
        "ownership.pue: Ensure this value is less than or equal to 3.0.; "
        "hourly_requests_per_second[23]: Ensure this value is greater than or equal to 0."
    )


def test_a_message_that_names_its_field_is_not_prefixed_again():
    errors = {"gpu_count": ["gpu_count: 17 GPUs are no whole number of instances"]}
    assert serializer_errors_text(errors) == "gpu_count: 17 GPUs are no whole number of instances"
