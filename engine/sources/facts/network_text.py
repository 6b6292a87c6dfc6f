"""A node's network bandwidth from the free text a system description gives.

MLPerf system descriptions and users' tables name the scale-out fabric in words:
``"8x ConnectX-7 IB NDR 400Gb/s"``, ``"Storage: 2x ..., Compute: 8x ..., Management: ..."``,
``"100GbE InfiniBand"``. :func:`node_network` reads the compute links (their count and rate;
RDMA at full rate, plain TCP at the model's efficiency) and which of them the text gives by
their rate alone. A rate without a count names the kind of link, not how many a node has: the caller
assumes one per accelerator (:data:`LINKS_PER_ACCELERATOR_ASSUMED`), the layout of 19 of the
22 multi-node systems of 400 Gb/s links or faster in the shared MLPerf rounds that state their
count, and names that assumption in the row's note. A rate no single port reaches
(:data:`FASTEST_PORT_GBPS`) is the node's total and is counted once.
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

__all__ = ["FASTEST_PORT_GBPS", "LINKS_PER_ACCELERATOR_ASSUMED", "NodeNetwork", "node_network"]

#: Links per accelerator assumed for a node whose network text gives a link rate but no count
#: (one NIC per accelerator, the rail-optimized layout of multi-node training systems).
LINKS_PER_ACCELERATOR_ASSUMED = 1
#: The fastest single port of the link table (InfiniBand XDR / ConnectX-8, 800 Gb/s;
#: ``engine/data/interconnects.csv``): an uncounted rate above it cannot be one link, so it is
#: the node's aggregate (``"3200 Gbps EFA"``, as clouds state a p5's network) and counts once.
FASTEST_PORT_GBPS = 800.0

#: Gb/s of the link generations a text may name without a figure.
_RATE_GBPS = {
    "xdr": 800,
    "ndr": 400,
    "hdr100": 100,
    "hdr": 200,
    "edr": 100,
    "fdr": 56,
    "omni-path": 100,
    "opa": 100,
}
_COUNT = re.compile(r"(\d+)\s*x")
# a figure in Gb/s ("400Gb/s", "2.5GbE", "10/25GbE": the first) or Tb/s ("3.2 Tbps")
_FIGURE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(?:/\s*\d+\s*)?(g|t)(?:b|bit|bps|be)")
_RDMA = re.compile(r"\bib\b|infiniband|roce|efa|omni|edr|hdr|ndr|xdr|connectx")
_NOT_COMPUTE = re.compile(r"management|storage|idrac|bmc")
# a figure of the host's PCIe lanes or an aggregate "bandwidth" is not a link of the fabric
# to count per accelerator
_NOT_A_LINK = re.compile(r"bandwidth|pcie")


class NodeNetwork(NamedTuple):
    """A node's network as its text states it.

    Attributes
    ----------
    GBps : float
        Bandwidth per direction (GB/s, protocol efficiency applied) of the links the text
        states, each uncounted link once; NaN when it states none.
    uncounted_GBps : float
        The share of ``GBps`` from links given by their rate alone (``"100GbE InfiniBand"``:
        one link's rate, not the node's); 0 when the text counts its links or names a link
        id.
    link_gbps : float
        The fastest uncounted link's rate (Gb/s), for the note; NaN when there is none.
    """

    GBps: float
    uncounted_GBps: float
    link_gbps: float

    def per_node(self, links_per_node) -> float:
        """``GBps`` with each uncounted link taken ``links_per_node`` times."""
        return self.GBps + self.uncounted_GBps * (links_per_node - 1)


def node_network(text, links: dict, tcp_efficiency: float) -> NodeNetwork:
    """The compute network ``text`` states: a link id of ``links`` (GB/s per direction), or
    free text whose compute links are summed (count x rate / 8, RDMA at full rate, TCP at
    ``tcp_efficiency``)."""
    if not isinstance(text, str) or not text.strip():
        return _NONE
    if text in links:
        return NodeNetwork(float(links[text]), 0.0, math.nan)
    s = text.lower()
    parts = re.split(r"[,;]", s)
    compute = [p for p in parts if "compute" in p]
    if compute:
        parts = compute
    else:
        parts = [p for p in parts if not _NOT_COMPUTE.search(p)] or parts
    counted = any(_COUNT.search(p) for p in parts)
    total, uncounted, link = 0.0, 0.0, math.nan
    for p in parts:
        cnt = _COUNT.search(p)
        rate = next((float(r) for key, r in _RATE_GBPS.items() if key in p), None)
        if rate is None:
            mm = _FIGURE.search(p)
            rate = float(mm.group(1)) * (1000.0 if mm.group(2) == "t" else 1.0) if mm else None
        count = float(cnt.group(1)) if cnt else 1.0
        # digits no link has (a count or rate beyond float) leave the part unread
        if rate is None or not math.isfinite(count * rate):
            continue
        GBps = count * rate / 8.0 * (1.0 if _RDMA.search(p) else tcp_efficiency)
        total += GBps
        if not counted and not _NOT_A_LINK.search(p) and rate <= FASTEST_PORT_GBPS:
            uncounted += GBps
            link = rate if math.isnan(link) else max(link, rate)
    if not total > 0:
        return _NONE
    return NodeNetwork(total, uncounted, link)


_NONE = NodeNetwork(math.nan, 0.0, math.nan)
