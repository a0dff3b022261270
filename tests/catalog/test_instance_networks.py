"""The inter-node network table (catalog/data/instance_networks.csv): sourced rows, for
instances the bundled catalogue offers, and the stated assumption for the rest."""

from catalog.domain.networks import ASSUMED_NETWORK_GBPS, instance_network, listed_networks
from catalog.services import BUNDLED_DATA_DIR

# Where each provider's instance names are in the bundled data.
OFFER_FILES = {
    "aws": "skypilot/aws_vms.GPU.csv",
    "azure": "azure_gpu_skus.csv",
    "gcp": "skypilot/gcp_vms.GPU.csv",
    "oci": "skypilot/oci_vms.csv",
    "nebius": "skypilot/nebius_vms.csv",
}


def test_every_listed_instance_has_a_sourced_positive_bandwidth_and_a_fabric():
    networks = listed_networks()
    assert len(networks) >= 15
    for (_provider, instance_type), network in networks.items():
        assert network.source_url.startswith("https://"), instance_type
        assert network.retrieved and network.fabric
        assert 100 <= network.network_gbps <= 6400, instance_type
        assert not network.assumed


def test_every_listed_instance_is_one_the_bundled_catalogue_offers():
    texts = {p: (BUNDLED_DATA_DIR / name).read_text() for p, name in OFFER_FILES.items()}
    for provider, instance_type in listed_networks():
        assert instance_type in texts[provider], (provider, instance_type)


def test_an_instance_the_table_does_not_list_gets_the_stated_assumption():
    network = instance_network("lambda", "gpu_8x_h100_sxm5")
    assert network.assumed and network.network_gbps == ASSUMED_NETWORK_GBPS
    assert "assumed" in network.fabric
    assert instance_network("aws", "p5.48xlarge").network_gbps == 3200
