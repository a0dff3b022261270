"""A serializer's errors as one line a command prints: each field with its messages, nested
fields by their path (ownership.pue, hourly_requests_per_second[23]), and a message that
already starts with its field's name not named twice."""

from typing import Any


def _lines(path: str, messages: Any) -> list[str]:
    if isinstance(messages, dict):
        return [
            line
            for key, value in messages.items()
            for line in _lines(f"{path}[{key}]" if str(key).isdigit() else f"{path}.{key}", value)
        ]
    if isinstance(messages, list) and messages and not all(isinstance(m, str) for m in messages):
        return [
            line
            for index, value in enumerate(messages)
            for line in _lines(f"{path}[{index}]", value)
        ]
    texts = [str(message) for message in (messages if isinstance(messages, list) else [messages])]
    name = path.rsplit(".", 1)[-1]
    return [text if text.startswith(f"{name}: ") else f"{path}: {text}" for text in texts]


def serializer_errors_text(errors: dict[str, Any]) -> str:
    return "; ".join(line for field, messages in errors.items() for line in _lines(field, messages))
