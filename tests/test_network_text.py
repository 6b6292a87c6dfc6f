"""A node's network from the words of a system description: counted links, links given by
their rate alone (one per accelerator assumed, and said so), figures that are not links, and
what a prediction makes of each."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from gpurank.engine.sources.facts.catalog import interconnect_catalog
from gpurank.engine.sources.facts.network_text import (
    FASTEST_PORT_GBPS,
    LINKS_PER_ACCELERATOR_ASSUMED,
    node_network,
)
from gpurank.engine.sources.model.calibrate import predict


@pytest.mark.parametrize("text, GBps, uncounted, link", [
    ("8x ConnectX-7 IB NDR 400Gb/s", 400.0, 0.0, math.nan),
    ("4x ConnectX-8 IB XDR 800 Gb/s", 400.0, 0.0, math.nan),
    # only the compute links count, whatever storage and management carry
    ("Storage: 2x ConnectX-7 IB NDR 400Gb/s, Compute: 8x ConnectX-7 IB NDR 400Gb/s, "
     "Management: 100Gb/s Ethernet NIC", 400.0, 0.0, math.nan),
    ("8x ConnectX-7 IB NDR 400Gb/s + 200Gb/s Ethernet NIC", 400.0, 0.0, math.nan),
    # a count anywhere in the text counts its links: two 100 Gb/s ports over TCP
    ("2x Mellanox ConnectX-6, 100Gb/s Ethernet", 6.25, 0.0, math.nan),
    # a rate alone is one link's: its rate, and that the count is not given
    ("100GbE InfiniBand", 12.5, 12.5, 100),
    ("InfiniBand EDR 100Gb/s", 12.5, 12.5, 100),
    ("InfiniBand NDR", 50.0, 50.0, 400),
    ("1Gb Ethernet", 0.0625, 0.0625, 1),
    # a decimal figure is read whole, not from its last digit
    ("2.5GbE", 0.15625, 0.15625, 2.5),
    # a rate no single port reaches is the node's total, as clouds state it: counted once
    ("3200 Gbps EFA", 400.0, 0.0, math.nan),
    ("3.2 Tbps EFAv3", 400.0, 0.0, math.nan),
    # a figure of the host's PCIe or an aggregate bandwidth is not a link to count again
    ("InfiniBand; Data bandwidth for GPU-PCIe: 504 GB/s; PCIe-NIC: 500 GB/s", 62.75, 0.0,
     math.nan),
    ("Ethernet, Infiniband", math.nan, 0.0, math.nan),
    ("", math.nan, 0.0, math.nan),
    (None, math.nan, 0.0, math.nan),
    # digits no link has are left unread, not a crash or an infinite network
    ("9" * 400 + "x ConnectX-7 IB NDR 400Gb/s", math.nan, 0.0, math.nan),
    ("4" + "0" * 5000 + "Gb/s InfiniBand", math.nan, 0.0, math.nan),
    ("1.5.5 Gbps", math.nan, 0.0, math.nan),
    (12.5, math.nan, 0.0, math.nan),
])
def test_the_compute_links_a_text_states(text, GBps, uncounted, link):
    n = node_network(text, {}, 0.5)
    assert n.GBps == pytest.approx(GBps, nan_ok=True)
    assert n.uncounted_GBps == pytest.approx(uncounted)
    assert n.link_gbps == pytest.approx(link, nan_ok=True)


def test_the_fastest_port_is_the_link_tables():
    # the threshold above which a rate is a node's total moves with the table, not by hand
    ports = interconnect_catalog()["line_rate_gbit_s_per_port"]
    assert FASTEST_PORT_GBPS == ports.max()
    assert node_network(f"{FASTEST_PORT_GBPS:g} Gb/s InfiniBand", {}, 0.5).uncounted_GBps > 0


def test_uncounted_links_are_taken_once_per_link_of_the_node():
    n = node_network("100GbE InfiniBand", {}, 0.5)
    assert n.per_node(8) == pytest.approx(100.0) and n.per_node(1) == pytest.approx(12.5)
    counted = node_network("2x ConnectX-6 IB HDR 200Gb/Sec", {}, 0.5)
    assert counted.per_node(8) == counted.GBps == pytest.approx(50.0)
    # a link id of the interconnect table is the node's, as the table gives it
    assert node_network("ib_ndr_400g", {"ib_ndr_400g": 50.0}, 0.5).per_node(8) == 50.0


def _rows(network, nodes=8):
    return pd.DataFrame({
        "accelerator": "NVIDIA B200", "benchmark": "llama31_8b", "n_accelerators": 8 * nodes,
        "n_nodes": nodes, "accelerators_per_node": 8, "global_batch_size": 32,
        "interconnect": "nvlink5", "network": network, "cpu_cores_per_accelerator": 16.0,
    }, index=range(len(network)))


def test_a_prediction_takes_one_uncounted_link_per_accelerator_and_says_so():
    texts = ["100GbE InfiniBand", f"{8 * LINKS_PER_ACCELERATOR_ASSUMED}x 100Gb/s InfiniBand",
             "1x 100Gb/s InfiniBand"]
    p = predict(_rows(texts))
    t = p["predicted_time_to_train_min"].to_numpy()
    # the rate alone reads as the node's eight links, not one of them ...
    assert t[0] == pytest.approx(t[1]) and t[0] < t[2]
    note = p["prediction_note"].iloc[0]
    assert ("network: 100 Gb/s links with no count given, one per accelerator assumed "
            "(8 x 100 Gb/s)") in note
    # ... and a text that counts its links is taken as it stands
    assert "no count given" not in p["prediction_note"].iloc[1]
    assert "no count given" not in p["prediction_note"].iloc[2]


def test_one_node_needs_no_network_and_gets_no_note():
    p = predict(_rows(["100GbE InfiniBand"], nodes=1))
    assert "no count given" not in p["prediction_note"].iloc[0]
    assert p["predicted_time_to_train_min"].iloc[0] > 0
