"""An offer's link to its provider's public pricing page, from the provider's URL template."""


def instance_family(instance_type: str) -> str:
    """The family an instance type belongs to: the part before the first dot (p5 of
    p5.48xlarge, Standard_ND96isr_H100_v5 stays whole)."""
    return instance_type.split(".", 1)[0]


def pricing_url(template: str, instance_type: str) -> str | None:
    """The template filled in ({family}, {instance_type}); None when the provider has none."""
    if not template:
        return None
    return template.format(family=instance_family(instance_type), instance_type=instance_type)
