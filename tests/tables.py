"""Small configuration tables for tests, built from a seeded generator."""

from __future__ import annotations

import numpy as np
import pandas as pd

ACCELERATORS = {
    # name: (relative speed per accelerator, price per hour, power W)
    "V100-SXM2-32GB": (1.0, 0.8, 300.0),
    "A100-SXM4-80GB": (2.4, 1.8, 400.0),
    "H100-SXM5-80GB": (5.0, 3.0, 700.0),
}


def config_table(n=200, *, seed=0, price=True, power=True) -> pd.DataFrame:
    """A canonical configuration table with sub-linear scaling and CPU starvation."""
    rng = np.random.default_rng(seed)
    names = list(ACCELERATORS)
    acc = rng.choice(names, size=n)
    per_node = rng.choice([1, 2, 4, 8], size=n)
    nodes = rng.choice([1, 1, 2, 4, 8, 16, 64], size=n)
    n_acc = per_node * nodes
    cores = rng.choice([2.0, 4.0, 8.0, 16.0], size=n)
    speed = np.array([ACCELERATORS[a][0] for a in acc])
    feed = np.minimum(1.0, cores / 8.0)
    comm = 1.0 / (1.0 + 0.04 * np.log2(n_acc) + 0.02 * (nodes > 1))
    per_acc = 1000.0 * speed * feed * comm * rng.lognormal(0.0, 0.05, size=n)
    throughput = per_acc * n_acc
    epochs = 35.0 + 5.0 * np.log2(n_acc) / 10.0
    ttt = epochs * 1_281_167 / throughput / 60.0
    df = pd.DataFrame(
        {
            "accelerator": acc,
            "n_accelerators": n_acc.astype(np.int64),
            "n_nodes": nodes.astype(np.int64),
            "accelerators_per_node": per_node.astype(np.int64),
            "host_cpu": rng.choice(["EPYC 7742", "Xeon 8480"], size=n),
            "cpu_cores_per_accelerator": cores,
            "interconnect": rng.choice(["NVLink", "PCIe"], size=n),
            "network": np.where(nodes > 1, "InfiniBand", "none"),
            "framework": rng.choice(["PyTorch", "MXNet"], size=n),
            "global_batch_size": (n_acc * 256).astype(np.int64),
            "epochs": epochs,
            "time_to_train_min": ttt,
            "throughput": throughput,
        }
    )
    if price:
        df["price_per_accelerator_hour"] = [ACCELERATORS[a][1] for a in acc]
    if power:
        df["power_w"] = [ACCELERATORS[a][2] for a in acc]
    return df
