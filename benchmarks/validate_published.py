"""Predicted against published training throughput of the model-card workloads
(DeepSeek-V3, gpt-oss, Llama 3.1 70B) on named hardware, and of the two Llama 3.1 workloads
the shipped models are fitted on (8B and 405B) as another software stack runs them.

    python benchmarks/validate_published.py            # the table of docs/simulator.md

Each case is a configuration as its publisher ran it (accelerators, layout, global batch,
number format, sequence length, pipeline and expert parallelism), predicted by the shipped
model of the workload and compared on tokens per second per GPU. The model-card workloads
have no calibration rows (a first-principles prediction); Llama 3.1 8B and 405B are fitted
on MLPerf submissions, whose software is tuned for the benchmark, so their rows measure how
far a fit on MLPerf carries to a general-purpose training stack. The published figures:

- [DeepSeekV3]: 2.664 M H800 GPU-hours for 14.8 T pretraining tokens (180 K GPU-hours per
  trillion tokens) on 2,048 H800, FP8, batch 15,360 x 4,096 tokens, PP16 / EP64.
- [LlamaHerd]: 7.0 M H100-80GB GPU-hours for Llama 3.1 70B on about 15 T tokens (the
  layout is not published: 2,048 H100 at TP4 x PP8 with batch 2,048 is assumed, so the
  figure includes every stall, restart and evaluation of the real run).
- [MegatronBridge]: NVIDIA's Megatron-Bridge performance summary, 25.11 and 26.02 containers (its
  Llama 3 8B is Llama 3.1 8B's architecture; a layout's tensor x pipeline x context shards
  are the model-parallel group).

The gpt-oss card gives 2.1 M H100-hours for gpt-oss-120b but not its tokens, so it cannot
be turned into a throughput; it is not in the table.
"""

from __future__ import annotations

import sys
from dataclasses import replace

import pandas as pd

from gpurank.engine.sources.facts.catalog import accelerator_catalog, interconnect_catalog
from gpurank.engine.sources.model.calibrate import predict
from gpurank.engine.sources.model.workloads import workload

H100, GB200, GB300, B200 = "nvidia_h100_sxm5", "nvidia_gb200", "nvidia_gb300", "nvidia_b200_hgx"
B300 = "nvidia_b300_hgx"
H800 = "nvidia_h800_sxm5"  # added below: an H100 with NVLink cut to 400 GB/s
_DGX = dict(accelerators_per_node=8, interconnect="NVLINK Gen4 900 GB/s + NVSWITCH Gen3",
            network="8x ConnectX-7 IB NDR 400 Gb/s", host_cpu="Intel Xeon Platinum 8480C")
_DGX_B = dict(_DGX, interconnect="NVLINK Gen5 1800 GB/s + NVSWITCH Gen4")
_NVL72 = dict(accelerators_per_node=4, interconnect="NVLINK Gen5 1800 GB/s + NVSWITCH Gen5",
              network="4x ConnectX-7 IB NDR 400 Gb/s", host_cpu="Neoverse-V2")
_NVL72_U = dict(_NVL72, network="4x ConnectX-8 IB XDR 800 Gb/s")
_DGX_B3 = dict(_DGX_B, network="8x ConnectX-8 800 Gb/s", host_cpu="Intel Xeon 6776P")
_MB25, _MB26 = "[MegatronBridge] 25.11", "[MegatronBridge] 26.02"

#: (workload, published tokens/s/GPU, source, accelerator, GPUs, global batch, format,
#:  sequence length, pipeline x tensor shards, expert parallel, node facts)
CASES = [
    ("deepseek_v3_671b", 14.8e12 / 2.664e6 / 3600, "[DeepSeekV3] GPU-hours", H800, 2048,
     15360, "fp8", 4096, 16, 64, dict(_DGX, interconnect="nvlink_h800")),
    ("deepseek_v3_671b", 4018, _MB25, GB200, 256, 4096, "fp8", 4096, 8, 32,
     _NVL72),
    ("deepseek_v3_671b", 3139, _MB25, GB200, 256, 4096, "bf16", 4096, 4,
     64, _NVL72),
    ("deepseek_v3_671b", 4357, _MB25, GB300, 256, 4096, "fp8", 4096, 2, 32,
     _NVL72_U),
    ("deepseek_v3_671b", 2139, _MB25, B200, 256, 2048, "fp8", 4096, 16, 8,
     _DGX_B),
    ("gpt_oss_120b", 5630, _MB25, H100, 64, 512, "bf16", 4096, 4, 8, _DGX),
    ("gpt_oss_120b", 15876, _MB25, GB200, 64, 1280, "bf16", 8192, 1, 64,
     _NVL72),
    ("gpt_oss_120b", 18347, _MB25, GB300, 64, 1280, "bf16", 8192, 1, 64,
     _NVL72_U),
    ("gpt_oss_120b", 8213, _MB25, B200, 64, 512, "bf16", 4096, 1, 8, _DGX_B),
    ("llama31_70b", 1602, _MB25, H100, 64, 128, "fp8", 8192, 32, 1, _DGX),
    ("llama31_70b", 4312, _MB25, GB200, 64, 256, "fp8", 8192, 1, 1, _NVL72),
    ("llama31_70b", 15e12 / 7.0e6 / 3600, "[LlamaHerd] GPU-hours", H100, 2048, 2048, "bf16",
     8192, 32, 1, _DGX),
    ("llama31_8b", 37556, _MB25, GB300, 8, 128, "fp8", 8192, 1, 1, _NVL72_U),
    ("llama31_8b", 31508, _MB25, GB200, 8, 128, "fp8", 8192, 1, 1, _NVL72),
    ("llama31_8b", 30624, _MB25, B200, 8, 128, "fp8", 8192, 1, 1, _DGX_B),
    ("llama31_8b", 14451, _MB25, H100, 8, 128, "fp8", 8192, 1, 1, _DGX),
    # TP2 x PP8 x CP2, TP4 x PP16, TP4 x PP8 x CP2 and TP8 x PP8 x CP2
    ("llama31_405b", 999, _MB25, GB300, 256, 1536, "fp8", 8192, 32, 1,
     _NVL72_U),
    ("llama31_405b", 813, _MB25, GB200, 256, 1536, "fp8", 8192, 64, 1,
     _NVL72),
    ("llama31_405b", 661, _MB25, B200, 128, 64, "fp8", 8192, 64, 1, _DGX_B),
    ("llama31_405b", 292, _MB25, H100, 1024, 512, "fp8", 8192, 128, 1, _DGX),
    # the 26.02 container: B300 nodes, NVFP4, and gpt-oss-120b's experts over 8 nodes (EP64)
    ("deepseek_v3_671b", 4612, _MB26, GB300, 256, 4096, "fp8", 4096, 2, 32, _NVL72_U),
    ("deepseek_v3_671b", 3955, _MB26, GB200, 256, 4096, "fp8", 4096, 4, 64, _NVL72),
    ("deepseek_v3_671b", 2983, _MB26, B300, 256, 4096, "fp8", 4096, 16, 8, _DGX_B3),
    ("deepseek_v3_671b", 2689, _MB26, B200, 256, 4096, "fp8", 4096, 16, 8, _DGX_B),
    ("gpt_oss_120b", 19412, _MB26, GB300, 64, 1280, "bf16", 4096, 1, 64, _NVL72_U),
    ("gpt_oss_120b", 15784, _MB26, GB200, 64, 1280, "bf16", 4096, 1, 64, _NVL72),
    ("gpt_oss_120b", 8359, _MB26, B300, 64, 1280, "bf16", 4096, 1, 64, _DGX_B3),
    ("gpt_oss_120b", 8047, _MB26, B200, 64, 1280, "bf16", 4096, 1, 64, _DGX_B),
    ("gpt_oss_120b", 5993, _MB26, H100, 64, 1280, "bf16", 4096, 4, 8, _DGX),
    ("llama31_70b", 5003, _MB26, GB300, 64, 256, "fp8", 8192, 1, 1, _NVL72_U),
    ("llama31_70b", 6798, _MB26, GB300, 64, 256, "fp4", 8192, 4, 1, _NVL72_U),
    ("llama31_70b", 5041, _MB26, GB200, 64, 256, "fp4", 8192, 8, 1, _NVL72),
    ("llama31_70b", 1621, _MB26, H100, 64, 256, "fp8", 8192, 32, 1, _DGX),
    ("llama31_405b", 1347, _MB26, GB300, 256, 1536, "fp4", 8192, 32, 1, _NVL72_U),
    ("llama31_405b", 1145, _MB26, GB200, 256, 1536, "fp4", 8192, 64, 1, _NVL72),
]


def _at_length(wl, seq: int):
    """The workload at another sequence length: FLOPs, bytes and activations per token kept,
    the attention's s^2 term rescaled (its share read from the workload's FLOPs formula)."""
    if seq == wl.tokens_per_sample:
        return wl
    r = seq / wl.tokens_per_sample
    dense = 6.0 * (wl.active_params or wl.params) * wl.tokens_per_sample
    attn = max(wl.flops_per_sample - dense, 0.0)
    return replace(wl, tokens_per_sample=seq, flops_per_sample=(dense + attn * r) * r,
                   bytes_per_sample=wl.bytes_per_sample * r,
                   activation_gb_per_sample=wl.activation_gb_per_sample * r,
                   input_bytes_per_sample=wl.input_bytes_per_sample * r)


def _tables():
    """The catalogs with the H800 (an H100 SXM5 whose NVLink runs at 400 GB/s both ways,
    [H800]) and its link."""
    acc = accelerator_catalog()
    h = acc[acc["accelerator_id"] == "nvidia_h100_sxm5"].iloc[0].copy()
    h["accelerator_id"], h["display_name"] = H800, "NVIDIA H800 SXM5 80GB"
    h["intra_link_id"] = "nvlink_h800"
    acc = pd.concat([acc, h.to_frame().T], ignore_index=True)
    links = interconnect_catalog()
    lk = links[links["link_id"] == "nvlink4"].iloc[0].copy()
    lk["link_id"], lk["aggregate_GB_s_per_dir"] = "nvlink_h800", 200
    return acc, pd.concat([links, lk.to_frame().T], ignore_index=True)


def validate() -> pd.DataFrame:
    acc, links = _tables()
    out = []
    for name, pub, src, accel, n, gb, fmt, seq, shards, ep, node in CASES:
        wl = replace(_at_length(workload(name), seq), model_parallel=shards,
                     max_model_parallel=max(shards, workload(name).sample_split),
                     expert_parallel=ep)
        g = node["accelerators_per_node"]
        row = dict(node, accelerator=accel, n_accelerators=n, n_nodes=n // g,
                   global_batch_size=gb, precision=fmt)
        p = predict(pd.DataFrame([row]), workload=wl, accelerator_table=acc,
                    interconnect_table=links)
        pred = float(p["predicted_throughput"].iloc[0]) / n
        out.append({"workload": name, "hardware": f"{n} x {accel}", "format": fmt,
                    "published": pub, "predicted": pred, "error": pred / pub - 1.0,
                    "source": src, "basis": p["prediction_basis"].iloc[0],
                    "bottleneck": p["predicted_bottleneck"].iloc[0],
                    "note": p["prediction_note"].iloc[0]})
    return pd.DataFrame(out)


def main() -> int:
    t = validate()
    print("| workload | hardware | format | published tokens/s/GPU | predicted | error | basis | "
          "source |")
    print("|---|---|---|--:|--:|--:|---|---|")
    for r in t.itertuples():
        print(f"| {r.workload} | {r.hardware} | {r.format} | {r.published:,.0f} | "
              f"{r.predicted:,.0f} | {r.error:+.0%} | {r.basis} | {r.source} |")
    # a ranking tool needs the order of the systems more than their rates
    print("\n| workload | rows | median abs. error | Spearman |")
    print("|---|--:|--:|--:|")
    for name, g in t.dropna(subset=["predicted"]).groupby("workload"):
        rho = g["published"].rank().corr(g["predicted"].rank())
        print(f"| {name} | {len(g)} | {g['error'].abs().median():.0%} | {rho:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
