"""DRF fields the whole API shares."""

from rest_framework import serializers


class StringField(serializers.CharField):
    """A string, as the schema says: DRF's CharField would quietly turn the number 0 into "0"."""

    def to_internal_value(self, data) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)
