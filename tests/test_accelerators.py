"""One accelerator resolver (engine/sources/facts/accelerators.py) and one fact table.

Every name of the alias table and every accelerator name of a real MLPerf system description
in ../shared/data is pinned to the product it resolves to; the reader, calibration and the
simulator are checked to agree on each.
"""

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from gpurank.engine.sources.facts.catalog import accelerator_catalog, interconnect_catalog
from gpurank.engine.errors import UsageError
from gpurank.engine.sources.facts.accelerators import (
    accelerator_aliases,
    resolve_accelerator,
    resolve_accelerators,
)
from gpurank.engine.sources.model.calibrate import predict
from gpurank.engine.sources.mlperf.reader import read_mlperf
from gpurank.engine.sources.mlperf.systems import parse_system_description
from gpurank.engine.sources.sweep.simulate import simulate
from mlperf_data import shared_data

# name, accelerator_id, match, type, vendor, generation, rank, release year, modelled
# fmt: off
ALIASES = [
    ('V100-SXM2-16GB', 'nvidia_v100_sxm2_16gb', 'exact', 'gpu', 'NVIDIA', 'Volta', 1, 2017, True),
    ('V100-SXM-16GB', 'nvidia_v100_sxm2_16gb', 'exact', 'gpu', 'NVIDIA', 'Volta', 1, 2017, True),
    ('V100-SXM2-32GB', 'nvidia_v100_sxm2_32gb', 'exact', 'gpu', 'NVIDIA', 'Volta', 1, 2018, True),
    ('V100-SXM3-32GB', 'nvidia_v100_sxm2_32gb', 'stand-in',
     'gpu', 'NVIDIA', 'Volta', 1, 2018, True),
    ('V100-SXM3-32GB-H', 'nvidia_v100_sxm2_32gb', 'stand-in',
     'gpu', 'NVIDIA', 'Volta', 1, 2018, True),
    ('V100-PCIe-16GB', 'nvidia_v100_pcie_16gb', 'exact', 'gpu', 'NVIDIA', 'Volta', 1, 2017, True),
    ('V100-PCIe-32GB', 'nvidia_v100_pcie_32gb', 'exact', 'gpu', 'NVIDIA', 'Volta', 1, 2018, True),
    ('V100S-PCIe-32GB', 'nvidia_v100s_pcie_32gb', 'exact',
     'gpu', 'NVIDIA', 'Volta', 1, 2019, False),
    ('V100-32GB', '', 'unplaced', 'gpu', 'NVIDIA', 'Volta', 1, 2018, False),
    ('V100', '', 'unplaced', 'gpu', 'NVIDIA', 'Volta', 1, 2017, False),
    ('A100-SXM4-40GB', 'nvidia_a100_sxm4_40gb', 'exact', 'gpu', 'NVIDIA', 'Ampere', 2, 2020, True),
    ('A100-SXM4-80GB', 'nvidia_a100_sxm4_80gb', 'exact', 'gpu', 'NVIDIA', 'Ampere', 2, 2020, True),
    ('A100-PCIe-40GB', 'nvidia_a100_pcie_40gb', 'exact', 'gpu', 'NVIDIA', 'Ampere', 2, 2020, True),
    ('A100-PCIe-80GB', 'nvidia_a100_pcie_80gb', 'exact', 'gpu', 'NVIDIA', 'Ampere', 2, 2021, True),
    ('A100-40GB', 'nvidia_a100_sxm4_40gb', 'stand-in', 'gpu', 'NVIDIA', 'Ampere', 2, 2020, True),
    ('A100-80GB', 'nvidia_a100_sxm4_80gb', 'stand-in', 'gpu', 'NVIDIA', 'Ampere', 2, 2020, True),
    ('A100', '', 'unplaced', 'gpu', 'NVIDIA', 'Ampere', 2, 2020, False),
    ('A10', 'nvidia_a10', 'exact', 'gpu', 'NVIDIA', 'Ampere', 2, 2021, True),
    ('A10G', 'nvidia_a10g', 'exact', 'gpu', 'NVIDIA', 'Ampere', 2, 2021, False),
    ('A30', 'nvidia_a30', 'exact', 'gpu', 'NVIDIA', 'Ampere', 2, 2021, True),
    ('A40', 'nvidia_a40', 'exact', 'gpu', 'NVIDIA', 'Ampere', 2, 2020, True),
    ('RTX A5000', 'nvidia_rtx_a5000', 'exact', 'gpu', 'NVIDIA', 'Ampere', 2, 2021, True),
    ('RTX A6000', 'nvidia_rtx_a6000', 'exact', 'gpu', 'NVIDIA', 'Ampere', 2, 2020, True),
    ('T4', 'nvidia_t4', 'exact', 'gpu', 'NVIDIA', 'Turing', 1, 2018, True),
    ('L4', 'nvidia_l4', 'exact', 'gpu', 'NVIDIA', 'Ada', 3, 2023, True),
    ('L40', 'nvidia_l40', 'exact', 'gpu', 'NVIDIA', 'Ada', 3, 2022, True),
    ('L40S', 'nvidia_l40s', 'exact', 'gpu', 'NVIDIA', 'Ada', 3, 2023, True),
    ('RTX 4090', 'nvidia_rtx_4090', 'exact', 'gpu', 'NVIDIA', 'Ada', 3, 2022, False),
    ('H100-SXM5-80GB', 'nvidia_h100_sxm5', 'exact', 'gpu', 'NVIDIA', 'Hopper', 4, 2022, True),
    ('H100-SXM5-96GB', 'nvidia_h100_sxm5_96gb', 'exact', 'gpu', 'NVIDIA', 'Hopper', 4, 2023, False),
    ('H100-PCIe-80GB', 'nvidia_h100_pcie', 'exact', 'gpu', 'NVIDIA', 'Hopper', 4, 2022, True),
    ('H100-NVL-94GB', 'nvidia_h100_nvl', 'exact', 'gpu', 'NVIDIA', 'Hopper', 4, 2023, True),
    ('H200-SXM5-141GB', 'nvidia_h200_sxm', 'exact', 'gpu', 'NVIDIA', 'Hopper', 4, 2024, True),
    ('GH200-96GB', 'nvidia_gh200_96gb', 'exact', 'gpu', 'NVIDIA', 'Hopper', 4, 2023, True),
    ('GH200-144GB', 'nvidia_gh200_144gb', 'exact', 'gpu', 'NVIDIA', 'Hopper', 4, 2024, True),
    ('B200-180GB', 'nvidia_b200_hgx', 'exact', 'gpu', 'NVIDIA', 'Blackwell', 5, 2024, True),
    ('GB200', 'nvidia_gb200', 'exact', 'gpu', 'NVIDIA', 'Blackwell', 5, 2025, True),
    ('MI250X', 'amd_mi250x', 'exact', 'gpu', 'AMD', 'CDNA2', 1, 2021, True),
    ('MI300X', 'amd_mi300x', 'exact', 'gpu', 'AMD', 'CDNA3', 2, 2023, True),
    ('MI325X', 'amd_mi325x', 'exact', 'gpu', 'AMD', 'CDNA3', 2, 2024, True),
    ('Radeon RX 7900 XTX', 'amd_radeon_rx_7900_xtx', 'exact',
     'gpu', 'AMD', 'RDNA3', 1, 2022, False),
    ('TPU v2', 'google_tpu_v2', 'exact', 'tpu', 'Google', 'TPU v2', 1, 2017, False),
    ('TPU v3', 'google_tpu_v3', 'exact', 'tpu', 'Google', 'TPU v3', 2, 2018, True),
    ('TPU v4', 'google_tpu_v4', 'exact', 'tpu', 'Google', 'TPU v4', 3, 2021, True),
    ('TPU v5e', 'google_tpu_v5e', 'exact', 'tpu', 'Google', 'TPU v5e', 4, 2023, True),
    ('TPU v5p', 'google_tpu_v5p', 'exact', 'tpu', 'Google', 'TPU v5p', 4, 2023, True),
    ('Gaudi', 'intel_gaudi', 'exact', 'other', 'Intel', 'Gaudi', 1, 2019, False),
    ('Gaudi2', 'intel_gaudi2', 'exact', 'other', 'Intel', 'Gaudi2', 2, 2022, True),
    ('Gaudi3', 'intel_gaudi3', 'exact', 'other', 'Intel', 'Gaudi3', 3, 2024, True),
    ('IPU GC200', 'graphcore_ipu_gc200', 'exact', 'other', 'Graphcore', 'Mk2 IPU', 1, 2020, False),
    ('Bow IPU', 'graphcore_bow_ipu', 'exact', 'other', 'Graphcore', 'Bow IPU', 2, 2022, False),
    ('Ascend 910', 'huawei_ascend_910', 'exact', 'other', 'Huawei', 'Ascend 910', 1, 2019, False),
    # current hardware
    ('H100-NVL', 'nvidia_h100_nvl', 'exact', 'gpu', 'NVIDIA', 'Hopper', 4, 2023, True),
    ('H100-PCIe', 'nvidia_h100_pcie', 'exact', 'gpu', 'NVIDIA', 'Hopper', 4, 2022, True),
    ('H100-SXM5', '', 'unplaced', 'gpu', 'NVIDIA', 'Hopper', 4, 2022, False),
    ('H100-80GB', '', 'unplaced', 'gpu', 'NVIDIA', 'Hopper', 4, 2022, False),
    ('H100', '', 'unplaced', 'gpu', 'NVIDIA', 'Hopper', 4, 2022, False),
    ('Hopper', '', 'unplaced', 'gpu', 'NVIDIA', 'Hopper', 4, 2022, False),
    ('H200-SXM5', 'nvidia_h200_sxm', 'exact', 'gpu', 'NVIDIA', 'Hopper', 4, 2024, True),
    ('H200-141GB', 'nvidia_h200_sxm', 'exact', 'gpu', 'NVIDIA', 'Hopper', 4, 2024, True),
    ('H200', 'nvidia_h200_sxm', 'exact', 'gpu', 'NVIDIA', 'Hopper', 4, 2024, True),
    ('H200-NVL-141GB', 'nvidia_h200_nvl', 'exact', 'gpu', 'NVIDIA', 'Hopper', 4, 2024, True),
    ('H200-NVL', 'nvidia_h200_nvl', 'exact', 'gpu', 'NVIDIA', 'Hopper', 4, 2024, True),
    ('GH200-480GB', '', 'unplaced', 'gpu', 'NVIDIA', 'Hopper', 4, 2023, False),
    ('GH200', '', 'unplaced', 'gpu', 'NVIDIA', 'Hopper', 4, 2023, False),
    ('B200-SXM-180GB', 'nvidia_b200_hgx', 'exact', 'gpu', 'NVIDIA', 'Blackwell', 5, 2024, True),
    ('B200-SXM-192GB', 'nvidia_b200_hgx', 'exact', 'gpu', 'NVIDIA', 'Blackwell', 5, 2024, True),
    ('B200-192GB', 'nvidia_b200_hgx', 'exact', 'gpu', 'NVIDIA', 'Blackwell', 5, 2024, True),
    ('B200-SXM', 'nvidia_b200_hgx', 'exact', 'gpu', 'NVIDIA', 'Blackwell', 5, 2024, True),
    ('B200', 'nvidia_b200_hgx', 'exact', 'gpu', 'NVIDIA', 'Blackwell', 5, 2024, True),
    ('Blackwell', '', 'unplaced', 'gpu', 'NVIDIA', 'Blackwell', 5, 2024, False),
    ('B300-SXM-270GB', 'nvidia_b300_hgx', 'exact', 'gpu', 'NVIDIA', 'Blackwell', 5, 2025, True),
    ('B300-SXM-288GB', 'nvidia_b300_hgx', 'exact', 'gpu', 'NVIDIA', 'Blackwell', 5, 2025, True),
    ('B300-270GB', 'nvidia_b300_hgx', 'exact', 'gpu', 'NVIDIA', 'Blackwell', 5, 2025, True),
    ('B300-288GB', 'nvidia_b300_hgx', 'exact', 'gpu', 'NVIDIA', 'Blackwell', 5, 2025, True),
    ('B300-SXM', 'nvidia_b300_hgx', 'exact', 'gpu', 'NVIDIA', 'Blackwell', 5, 2025, True),
    ('B300', 'nvidia_b300_hgx', 'exact', 'gpu', 'NVIDIA', 'Blackwell', 5, 2025, True),
    ('GB300', 'nvidia_gb300', 'exact', 'gpu', 'NVIDIA', 'Blackwell', 5, 2025, True),
    ('Blackwell Ultra', '', 'unplaced', 'gpu', 'NVIDIA', 'Blackwell', 5, 2025, False),
    ('RTX PRO 6000 SE', 'nvidia_rtx_pro_6000_se', 'exact', 'gpu', 'NVIDIA', 'Blackwell', 5, 2025, True),
    ('RTX PRO 6000 WE', '', 'unplaced', 'gpu', 'NVIDIA', 'Blackwell', 5, 2025, False),
    ('RTX PRO 6000 Max-Q', '', 'unplaced', 'gpu', 'NVIDIA', 'Blackwell', 5, 2025, False),
    ('RTX PRO 6000', '', 'unplaced', 'gpu', 'NVIDIA', 'Blackwell', 5, 2025, False),
    ('MI350X', 'amd_mi350x', 'exact', 'gpu', 'AMD', 'CDNA4', 3, 2025, True),
    ('MI355X', 'amd_mi355x', 'exact', 'gpu', 'AMD', 'CDNA4', 3, 2025, True),
    ('TPU v6e', 'google_tpu_v6e', 'exact', 'tpu', 'Google', 'TPU v6e', 5, 2024, True),
    ('TPU v7x', 'google_tpu7x', 'exact', 'tpu', 'Google', 'TPU7x', 6, 2025, True),
    ('TPU v7', 'google_tpu7x', 'exact', 'tpu', 'Google', 'TPU7x', 6, 2025, True),
    ('VR200', 'nvidia_vr200', 'exact', 'gpu', 'NVIDIA', 'Rubin', 6, 2026, True),
    ('Rubin', '', 'unplaced', 'gpu', 'NVIDIA', 'Rubin', 6, 2026, False),
    ('MI455X', 'amd_mi455x', 'exact', 'gpu', 'AMD', 'CDNA5', 4, 2026, True),
    ('MI450', '', 'unplaced', 'gpu', 'AMD', 'CDNA5', 4, 2026, False),
    ('Trainium', 'aws_trainium', 'exact', 'other', 'AWS', 'Trainium', 1, 2022, True),
    ('Trainium1', 'aws_trainium', 'exact', 'other', 'AWS', 'Trainium', 1, 2022, True),
    ('Trainium2', 'aws_trainium2', 'exact', 'other', 'AWS', 'Trainium2', 2, 2024, True),
    ('Trainium3', 'aws_trainium3', 'exact', 'other', 'AWS', 'Trainium3', 3, 2025, True),
    ('Gaudi3 PCIe', '', 'unplaced', 'other', 'Intel', 'Gaudi3', 3, 2024, False),
    ('Gaudi3 450W', '', 'unplaced', 'other', 'Intel', 'Gaudi3', 3, 2024, False),
]
# fmt: on

# raw accelerator_model_name, accelerator_memory_capacity, hint (system name + id; only
# where the name has no TPU version), model name, accelerator_id, match: every distinct name
# of the system descriptions in ../shared/data/mlperf_resnet and ../shared/data/mlperf_training
# fmt: off
REAL_NAMES = [
    ('A100-SXM4-40GB', '40 GB', '', 'A100-SXM4-40GB', 'nvidia_a100_sxm4_40gb', 'exact'),
    ('A100-SXM4-80GB', '80 GB', '', 'A100-SXM4-80GB', 'nvidia_a100_sxm4_80gb', 'exact'),
    ('Ascend 910 Pro A', '32 GB', '', 'Ascend 910', 'huawei_ascend_910', 'exact'),
    ('Ascend910', '32 GB', '', 'Ascend 910', 'huawei_ascend_910', 'exact'),
    ('Graphcore Bow IPU', '32GB', '', 'Bow IPU', 'graphcore_bow_ipu', 'exact'),
    ('Graphcore IPU GC200', '32GB', '', 'IPU GC200', 'graphcore_ipu_gc200', 'exact'),
    ('Habana Gaudi', '32 GB', '', 'Gaudi', 'intel_gaudi', 'exact'),
    ('Habana Gaudi HL-205', '32 GB', '', 'Gaudi', 'intel_gaudi', 'exact'),
    ('Habana Gaudi2', '96 GB', '', 'Gaudi2', 'intel_gaudi2', 'exact'),
    ('Intel Gaudi2', '96 GB', '', 'Gaudi2', 'intel_gaudi2', 'exact'),
    ('Intel(R) Gaudi(R) 2 AI Accelerator', '96 GB', '', 'Gaudi2', 'intel_gaudi2', 'exact'),
    ('N/A', 'N/A', '', '', '', 'cpu'),
    ('NA', '', '', '', '', 'cpu'),
    ('NVIDIA A100', '40G', '', 'A100-40GB', 'nvidia_a100_sxm4_40gb', 'stand-in'),
    ('NVIDIA A100 - PCIe - 80 GB', '80 GB', '', 'A100-PCIe-80GB', 'nvidia_a100_pcie_80gb', 'exact'),
    ('NVIDIA A100-PCIE-40GB', '40 GB', '', 'A100-PCIe-40GB', 'nvidia_a100_pcie_40gb', 'exact'),
    ('NVIDIA A100-PCIE-40GB (250W)', '40 GB', '',
     'A100-PCIe-40GB', 'nvidia_a100_pcie_40gb', 'exact'),
    ('NVIDIA A100-PCIE-40GB (250W)', '40GB', '',
     'A100-PCIe-40GB', 'nvidia_a100_pcie_40gb', 'exact'),
    ('NVIDIA A100-PCIE-80GB', '80 GB', '', 'A100-PCIe-80GB', 'nvidia_a100_pcie_80gb', 'exact'),
    ('NVIDIA A100-PCIE-80GB (300W)', '40 GB', '',
     'A100-PCIe-80GB', 'nvidia_a100_pcie_80gb', 'exact'),
    ('NVIDIA A100-PCIE-80GB (300W)', '80 GB', '',
     'A100-PCIe-80GB', 'nvidia_a100_pcie_80gb', 'exact'),
    ('NVIDIA A100-PCIe-40GB', '40 GB', '', 'A100-PCIe-40GB', 'nvidia_a100_pcie_40gb', 'exact'),
    ('NVIDIA A100-PCIe-40GB (250W)', '40 GB', '',
     'A100-PCIe-40GB', 'nvidia_a100_pcie_40gb', 'exact'),
    ('NVIDIA A100-PCIe-40GB (250W)', '40GB', '',
     'A100-PCIe-40GB', 'nvidia_a100_pcie_40gb', 'exact'),
    ('NVIDIA A100-PCIe-40GB(250W)', '40G', '', 'A100-PCIe-40GB', 'nvidia_a100_pcie_40gb', 'exact'),
    ('NVIDIA A100-PCIe-80GB', '80 GB', '', 'A100-PCIe-80GB', 'nvidia_a100_pcie_80gb', 'exact'),
    ('NVIDIA A100-PCIe-80GB', '80GiB', '', 'A100-PCIe-80GB', 'nvidia_a100_pcie_80gb', 'exact'),
    ('NVIDIA A100-PCIe-80GB (300W)', '80 GB', '',
     'A100-PCIe-80GB', 'nvidia_a100_pcie_80gb', 'exact'),
    ('NVIDIA A100-SXM-40GB', '', '', 'A100-SXM4-40GB', 'nvidia_a100_sxm4_40gb', 'exact'),
    ('NVIDIA A100-SXM-40GB', '40 GB', '', 'A100-SXM4-40GB', 'nvidia_a100_sxm4_40gb', 'exact'),
    ('NVIDIA A100-SXM-80GB', '80 GB', '', 'A100-SXM4-80GB', 'nvidia_a100_sxm4_80gb', 'exact'),
    ('NVIDIA A100-SXM-80GB', '80G', '', 'A100-SXM4-80GB', 'nvidia_a100_sxm4_80gb', 'exact'),
    ('NVIDIA A100-SXM-80GB (400W)', '80GB', '', 'A100-SXM4-80GB', 'nvidia_a100_sxm4_80gb', 'exact'),
    ('NVIDIA A100-SXM-80GB (500W)', '80 GB', '',
     'A100-SXM4-80GB', 'nvidia_a100_sxm4_80gb', 'exact'),
    ('NVIDIA A100-SXM-80GB CTS', '80 GB', '', 'A100-SXM4-80GB', 'nvidia_a100_sxm4_80gb', 'exact'),
    ('NVIDIA A100-SXM4-40GB', '40 GB', '', 'A100-SXM4-40GB', 'nvidia_a100_sxm4_40gb', 'exact'),
    ('NVIDIA A100-SXM4-40GB (400W)', '40 GB', '',
     'A100-SXM4-40GB', 'nvidia_a100_sxm4_40gb', 'exact'),
    ('NVIDIA A100-SXM4-40GB (400W)', '40G', '', 'A100-SXM4-40GB', 'nvidia_a100_sxm4_40gb', 'exact'),
    ('NVIDIA A100-SXM4-80GB', '', '', 'A100-SXM4-80GB', 'nvidia_a100_sxm4_80gb', 'exact'),
    ('NVIDIA A100-SXM4-80GB', '80 GB', '', 'A100-SXM4-80GB', 'nvidia_a100_sxm4_80gb', 'exact'),
    ('NVIDIA A100-SXM4-80GB', '80G', '', 'A100-SXM4-80GB', 'nvidia_a100_sxm4_80gb', 'exact'),
    ('NVIDIA A100-SXM4-80GB', '80GiB', '', 'A100-SXM4-80GB', 'nvidia_a100_sxm4_80gb', 'exact'),
    ('NVIDIA A100-SXM4-80GB (400W)', '80 GB', '',
     'A100-SXM4-80GB', 'nvidia_a100_sxm4_80gb', 'exact'),
    ('NVIDIA A100-SXM4-80GB (500W)', '80 GB', '',
     'A100-SXM4-80GB', 'nvidia_a100_sxm4_80gb', 'exact'),
    ('NVIDIA A100-SXM4-80GB (500W)', '80G', '', 'A100-SXM4-80GB', 'nvidia_a100_sxm4_80gb', 'exact'),
    ('NVIDIA A100-SXM4-80GB(400W)', '80G', '', 'A100-SXM4-80GB', 'nvidia_a100_sxm4_80gb', 'exact'),
    ('NVIDIA A10G', '22.056640625 GB', '', 'A10G', 'nvidia_a10g', 'exact'),
    ('NVIDIA A30', '24 GB', '', 'A30', 'nvidia_a30', 'exact'),
    ('NVIDIA A30', '24 GiB', '', 'A30', 'nvidia_a30', 'exact'),
    ('NVIDIA A30', '24GiB', '', 'A30', 'nvidia_a30', 'exact'),
    ('NVIDIA A30-PCIE-24GB', '24 GB', '', 'A30', 'nvidia_a30', 'exact'),
    ('NVIDIA A40', '48G', '', 'A40', 'nvidia_a40', 'exact'),
    ('NVIDIA H100-PCIe', '80 GB', '', 'H100-PCIe-80GB', 'nvidia_h100_pcie', 'exact'),
    ('NVIDIA H100-PCIe-80GB', '80 GB', '', 'H100-PCIe-80GB', 'nvidia_h100_pcie', 'exact'),
    ('NVIDIA H100-SXM-80GB', '80 GB', '', 'H100-SXM5-80GB', 'nvidia_h100_sxm5', 'exact'),
    ('NVIDIA H100-SXM5-80GB', '', '', 'H100-SXM5-80GB', 'nvidia_h100_sxm5', 'exact'),
    ('NVIDIA H100-SXM5-80GB', '80 GB', '', 'H100-SXM5-80GB', 'nvidia_h100_sxm5', 'exact'),
    ('NVIDIA H100-SXM5-80GB', '80G', '', 'H100-SXM5-80GB', 'nvidia_h100_sxm5', 'exact'),
    ('NVIDIA H100-SXM5-80GB', '80GB', '', 'H100-SXM5-80GB', 'nvidia_h100_sxm5', 'exact'),
    ('NVIDIA H100-SXM5-80GB', '81559 MiB', '', 'H100-SXM5-80GB', 'nvidia_h100_sxm5', 'exact'),
    ('NVIDIA H100-SXM5-96GB', '96 GB', '', 'H100-SXM5-96GB', 'nvidia_h100_sxm5_96gb', 'exact'),
    ('NVIDIA H200-SXM5-141GB', '143771 MiB', '', 'H200-SXM5-141GB', 'nvidia_h200_sxm', 'exact'),
    ('NVIDIA L4', '24 GB', '', 'L4', 'nvidia_l4', 'exact'),
    ('NVIDIA L40', '48 GB', '', 'L40', 'nvidia_l40', 'exact'),
    ('NVIDIA L40S', '45 GB', '', 'L40S', 'nvidia_l40s', 'exact'),
    ('NVIDIA L40S', '46068 MiB', '', 'L40S', 'nvidia_l40s', 'exact'),
    ('NVIDIA L40S', '48 GB', '', 'L40S', 'nvidia_l40s', 'exact'),
    ('NVIDIA RTX A5000', '2x 24 GB', '', 'RTX A5000', 'nvidia_rtx_a5000', 'exact'),
    ('NVIDIA V100', 'TODO', '', 'V100', '', 'unplaced'),
    ('NVIDIA V100-SXM2-16GB (300W)', '16 GB', '',
     'V100-SXM2-16GB', 'nvidia_v100_sxm2_16gb', 'exact'),
    ('NVIDIA V100-SXM3-32GB (450W)', '32 GB', '',
     'V100-SXM3-32GB-H', 'nvidia_v100_sxm2_32gb', 'stand-in'),
    ('Nvidia Tesla V100', '32GB', '', 'V100-32GB', '', 'unplaced'),
    ('Nvidia Tesla V100-SXM2-32GB', '32 GB', '',
     'V100-SXM2-32GB', 'nvidia_v100_sxm2_32gb', 'exact'),
    ('Nvidia Tesla V100S-PCIe-32GB', '32 GB', '',
     'V100S-PCIe-32GB', 'nvidia_v100s_pcie_32gb', 'exact'),
    ('TPU', '32GB', 'tpu-v4-128 tpu-v4-128-TF', 'TPU v4', 'google_tpu_v4', 'exact'),
    ('TPU', '32GB', 'tpu-v4-256 tpu-v4-256-JAX-Distributed-Shampoo',
     'TPU v4', 'google_tpu_v4', 'exact'),
    ('TPU', '32GB', 'tpu-v4-4096 tpu-v4-4096-TF', 'TPU v4', 'google_tpu_v4', 'exact'),
    ('TPU', '32GB', 'tpu-v4-6912 tpu-v4-6912-TF', 'TPU v4', 'google_tpu_v4', 'exact'),
    ('TPU', 'TODO', 'tpu-v4-16 tpu-v4-16-TF', 'TPU v4', 'google_tpu_v4', 'exact'),
    ('TPU', 'TODO', 'tpu-v4-512 tpu-v4-512-TF', 'TPU v4', 'google_tpu_v4', 'exact'),
    ('TPU v3', '32 GiB', '', 'TPU v3', 'google_tpu_v3', 'exact'),
    ('TPU-v4', '32GB', '', 'TPU v4', 'google_tpu_v4', 'exact'),
    ('TPU-v5e', '16GB', '', 'TPU v5e', 'google_tpu_v5e', 'exact'),
    ('TPU-v5p', '95GB', '', 'TPU v5p', 'google_tpu_v5p', 'exact'),
    ('Tesla V100-PCIe-32GB', '32 GB', '', 'V100-PCIe-32GB', 'nvidia_v100_pcie_32gb', 'exact'),
    ('Tesla V100-SXM2-16GB', '16 GB', '', 'V100-SXM2-16GB', 'nvidia_v100_sxm2_16gb', 'exact'),
    ('Tesla V100-SXM3-32GB', '32 GB', '', 'V100-SXM3-32GB', 'nvidia_v100_sxm2_32gb', 'stand-in'),
    ('Tesla V100-SXM3-32GB-H', '32 GB', '',
     'V100-SXM3-32GB-H', 'nvidia_v100_sxm2_32gb', 'stand-in'),
    ('Tesla V100-SXM3-H-32GB', '32 GB', '',
     'V100-SXM3-32GB-H', 'nvidia_v100_sxm2_32gb', 'stand-in'),
    ('tpu-v3', '32 GB', '', 'TPU v3', 'google_tpu_v3', 'exact'),
    ('tpuv2-512', '', '', 'TPU v2', 'google_tpu_v2', 'exact'),
    ('tpuv2-8', '', '', 'TPU v2', 'google_tpu_v2', 'exact'),
    ('tpuv3-32', '', '', 'TPU v3', 'google_tpu_v3', 'exact'),
    ('tpuv3-512', '', '', 'TPU v3', 'google_tpu_v3', 'exact'),
    ('tpuv3-8', '', '', 'TPU v3', 'google_tpu_v3', 'exact'),
    ('AMD Instinct MI300X 192GB HBM3', '192 GB', '', 'MI300X', 'amd_mi300x', 'exact'),
    ('AMD Instinct MI300X 192GB HBM3', '192GB', '', 'MI300X', 'amd_mi300x', 'exact'),
    ('AMD Instinct MI325X 256GB HBM3E', '256 GB', '', 'MI325X', 'amd_mi325x', 'exact'),
    ('AMD Instinct MI325X 256GB HBM3E', '256GB', '', 'MI325X', 'amd_mi325x', 'exact'),
    ('AMD Instinct MI325X 256GB HBM3E DLC', '256GB', '', 'MI325X', 'amd_mi325x', 'exact'),
    ('AMD Instinct MI325X 256GB HBM3e', '256 GB', '', 'MI325X', 'amd_mi325x', 'exact'),
    ('AMD Instinct MI325X 256GB HBM3e', '256G', '', 'MI325X', 'amd_mi325x', 'exact'),
    ('AMD Instinct MI325X 256GB HBM3e', '256GB', '', 'MI325X', 'amd_mi325x', 'exact'),
    ('AMD Instinct MI350X', '288 GB', '', 'MI350X', 'amd_mi350x', 'exact'),
    ('AMD Instinct MI350X', '294912 MiB', '', 'MI350X', 'amd_mi350x', 'exact'),
    ('AMD Instinct MI355X', '288 GB', '', 'MI355X', 'amd_mi355x', 'exact'),
    ('AMD Instinct MI355X', '288G', '', 'MI355X', 'amd_mi355x', 'exact'),
    ('AMD Radeon RX 7900 XTX', '24GB', '', 'Radeon RX 7900 XTX', 'amd_radeon_rx_7900_xtx', 'exact'),
    ('H100 NVL Tensor Core GPU (PCIe)', '94 GB', '', 'H100-NVL-94GB', 'nvidia_h100_nvl', 'exact'),
    ('H100 NVL Tensor Core GPU (PCIe)', '95830 MiB', '', 'H100-NVL', 'nvidia_h100_nvl', 'exact'),
    ('NVIDIA Blackwell GPU (B200-SXM-180GB)', '143771 MiB', '', 'B200-SXM-180GB', 'nvidia_b200_hgx', 'exact'),
    ('NVIDIA Blackwell GPU (B200-SXM-180GB)', '180 GB', '', 'B200-SXM-180GB', 'nvidia_b200_hgx', 'exact'),
    ('NVIDIA Blackwell GPU (B200-SXM-180GB)', '180GB', '', 'B200-SXM-180GB', 'nvidia_b200_hgx', 'exact'),
    ('NVIDIA Blackwell GPU (B200-SXM-180GB)', '183359 MiB', '', 'B200-SXM-180GB', 'nvidia_b200_hgx', 'exact'),
    ('NVIDIA Blackwell GPU (B200-SXM-180GB)', '192 GB', '', 'B200-SXM-180GB', 'nvidia_b200_hgx', 'exact'),
    ('NVIDIA Blackwell GPU (GB200)', '143771 MiB', '', 'GB200', 'nvidia_gb200', 'exact'),
    ('NVIDIA Blackwell GPU (GB200)', '186GB', '', 'GB200', 'nvidia_gb200', 'exact'),
    ('NVIDIA Blackwell GPU (GB200)', '189471 MiB', '', 'GB200', 'nvidia_gb200', 'exact'),
    ('NVIDIA Blackwell Ultra GPU (B300-SXM-270GB)', '275 GB', '', 'B300-SXM-270GB', 'nvidia_b300_hgx', 'exact'),
    ('NVIDIA Blackwell Ultra GPU (B300-SXM-270GB)', '275040 MiB', '', 'B300-SXM-270GB', 'nvidia_b300_hgx', 'exact'),
    ('NVIDIA Blackwell Ultra GPU (GB300)', '280 GB', '', 'GB300', 'nvidia_gb300', 'exact'),
    ('NVIDIA Blackwell Ultra GPU (GB300)', '284208 MiB', '', 'GB300', 'nvidia_gb300', 'exact'),
    ('NVIDIA Blackwell Ultra GPU (GB300)', '288GB', '', 'GB300', 'nvidia_gb300', 'exact'),
    ('NVIDIA GeForce RTX 4090', '24GB', '', 'RTX 4090', 'nvidia_rtx_4090', 'exact'),
    ('NVIDIA H100 80GB HBM3', '81559 MiB', '', 'H100-SXM5-80GB', 'nvidia_h100_sxm5', 'exact'),
    ('NVIDIA H200-NVL-141GB', '141 GB', '', 'H200-NVL-141GB', 'nvidia_h200_nvl', 'exact'),
    ('NVIDIA H200-NVL-141GB', '143771 MiB', '', 'H200-NVL-141GB', 'nvidia_h200_nvl', 'exact'),
    ('NVIDIA H200-SXM5-141GB', '141 GB', '', 'H200-SXM5-141GB', 'nvidia_h200_sxm', 'exact'),
    ('NVIDIA H200-SXM5-141GB', '141G', '', 'H200-SXM5-141GB', 'nvidia_h200_sxm', 'exact'),
    ('NVIDIA H200-SXM5-141GB', '141GB', '', 'H200-SXM5-141GB', 'nvidia_h200_sxm', 'exact'),
    ('NVIDIA H200-SXM5-141GB', '144384 MiB', '', 'H200-SXM5-141GB', 'nvidia_h200_sxm', 'exact'),
    ('NVIDIA RTX Pro 6000 SE PCIe 96GB', '96000 MiB', '', 'RTX PRO 6000 SE', 'nvidia_rtx_pro_6000_se', 'exact'),
    ('TPU-trillium', '32GB', '', 'TPU v6e', 'google_tpu_v6e', 'exact'),
]
# fmt: on

# raw accelerator_model_name, accelerator_memory_capacity, model name, accelerator_id: every
# distinct pair of the system descriptions of MLPerf Training v4.1, v5.0 and v5.1
# (mlcommons/training_results_v4.1, _v5.0, _v5.1, systems/*.json), rounds not in ../shared
# fmt: off
LATER_ROUNDS = [
    ('AMD Instinct MI300X 192GB HBM3', '192 GB', 'MI300X', 'amd_mi300x'),
    ('AMD Instinct MI300X 192GB HBM3', '192GB', 'MI300X', 'amd_mi300x'),
    ('AMD Instinct MI325X 256GB HBM3E DLC', '256GB', 'MI325X', 'amd_mi325x'),
    ('AMD Instinct MI325X 256GB HBM3E', '256 GB', 'MI325X', 'amd_mi325x'),
    ('AMD Instinct MI325X 256GB HBM3E', '256GB', 'MI325X', 'amd_mi325x'),
    ('AMD Instinct MI325X 256GB HBM3e', '256 GB', 'MI325X', 'amd_mi325x'),
    ('AMD Instinct MI325X 256GB HBM3e', '256G', 'MI325X', 'amd_mi325x'),
    ('AMD Instinct MI325X 256GB HBM3e', '256GB', 'MI325X', 'amd_mi325x'),
    ('AMD Instinct MI350X', '288 GB', 'MI350X', 'amd_mi350x'),
    ('AMD Instinct MI350X', '294912 MiB', 'MI350X', 'amd_mi350x'),
    ('AMD Instinct MI355X', '288 GB', 'MI355X', 'amd_mi355x'),
    ('AMD Instinct MI355X', '288G', 'MI355X', 'amd_mi355x'),
    ('AMD Radeon RX 7900 XTX', '24GB', 'Radeon RX 7900 XTX', 'amd_radeon_rx_7900_xtx'),
    ('H100 NVL Tensor Core GPU (PCIe)', '94 GB', 'H100-NVL-94GB', 'nvidia_h100_nvl'),
    ('H100 NVL Tensor Core GPU (PCIe)', '95830 MiB', 'H100-NVL', 'nvidia_h100_nvl'),
    ('NVIDIA A100 - PCIe - 80 GB', '80 GB', 'A100-PCIe-80GB', 'nvidia_a100_pcie_80gb'),
    ('NVIDIA Blackwell GPU (B200-SXM-180GB)', '143771 MiB', 'B200-SXM-180GB', 'nvidia_b200_hgx'),
    ('NVIDIA Blackwell GPU (B200-SXM-180GB)', '180 GB', 'B200-SXM-180GB', 'nvidia_b200_hgx'),
    ('NVIDIA Blackwell GPU (B200-SXM-180GB)', '180GB', 'B200-SXM-180GB', 'nvidia_b200_hgx'),
    ('NVIDIA Blackwell GPU (B200-SXM-180GB)', '183359 MiB', 'B200-SXM-180GB', 'nvidia_b200_hgx'),
    ('NVIDIA Blackwell GPU (B200-SXM-180GB)', '192 GB', 'B200-SXM-180GB', 'nvidia_b200_hgx'),
    ('NVIDIA Blackwell GPU (GB200)', '143771 MiB', 'GB200', 'nvidia_gb200'),
    ('NVIDIA Blackwell GPU (GB200)', '186GB', 'GB200', 'nvidia_gb200'),
    ('NVIDIA Blackwell GPU (GB200)', '189471 MiB', 'GB200', 'nvidia_gb200'),
    ('NVIDIA Blackwell Ultra GPU (B300-SXM-270GB)', '275 GB', 'B300-SXM-270GB', 'nvidia_b300_hgx'),
    ('NVIDIA Blackwell Ultra GPU (B300-SXM-270GB)', '275040 MiB', 'B300-SXM-270GB',
     'nvidia_b300_hgx'),
    ('NVIDIA Blackwell Ultra GPU (GB300)', '280 GB', 'GB300', 'nvidia_gb300'),
    ('NVIDIA Blackwell Ultra GPU (GB300)', '284208 MiB', 'GB300', 'nvidia_gb300'),
    ('NVIDIA Blackwell Ultra GPU (GB300)', '288GB', 'GB300', 'nvidia_gb300'),
    ('NVIDIA GeForce RTX 4090', '24GB', 'RTX 4090', 'nvidia_rtx_4090'),
    ('NVIDIA H100 80GB HBM3', '81559 MiB', 'H100-SXM5-80GB', 'nvidia_h100_sxm5'),
    ('NVIDIA H100-SXM5-80GB', '80 GB', 'H100-SXM5-80GB', 'nvidia_h100_sxm5'),
    ('NVIDIA H100-SXM5-80GB', '80GB', 'H100-SXM5-80GB', 'nvidia_h100_sxm5'),
    ('NVIDIA H100-SXM5-80GB', '81559 MiB', 'H100-SXM5-80GB', 'nvidia_h100_sxm5'),
    ('NVIDIA H200 NVL 141GB', '96000 MiB', 'H200-NVL-141GB', 'nvidia_h200_nvl'),
    ('NVIDIA H200-NVL-141GB', '141 GB', 'H200-NVL-141GB', 'nvidia_h200_nvl'),
    ('NVIDIA H200-NVL-141GB', '143771 MiB', 'H200-NVL-141GB', 'nvidia_h200_nvl'),
    ('NVIDIA H200-SXM5-141GB', '141 GB', 'H200-SXM5-141GB', 'nvidia_h200_sxm'),
    ('NVIDIA H200-SXM5-141GB', '141G', 'H200-SXM5-141GB', 'nvidia_h200_sxm'),
    ('NVIDIA H200-SXM5-141GB', '141GB', 'H200-SXM5-141GB', 'nvidia_h200_sxm'),
    ('NVIDIA H200-SXM5-141GB', '143771 MiB', 'H200-SXM5-141GB', 'nvidia_h200_sxm'),
    ('NVIDIA H200-SXM5-141GB', '144384 MiB', 'H200-SXM5-141GB', 'nvidia_h200_sxm'),
    ('NVIDIA RTX A5000', '2x 24 GB', 'RTX A5000', 'nvidia_rtx_a5000'),
    ('NVIDIA RTX Pro 6000 SE PCIe 96GB', '96000 MiB', 'RTX PRO 6000 SE', 'nvidia_rtx_pro_6000_se'),
    ('TPU-trillium', '32GB', 'TPU v6e', 'google_tpu_v6e'),
    ('TPU-v5p', '95GB', 'TPU v5p', 'google_tpu_v5p'),
]
# fmt: on

# names as vendors and their tools write them (datasheets, nvidia-smi, cloud APIs): each is
# a modelled product
# fmt: off
VENDOR_NAMES = [
    ('NVIDIA Blackwell GPU (B200-SXM-180GB)', 'nvidia_b200_hgx'),
    ('NVIDIA Blackwell Ultra GPU (GB300)', 'nvidia_gb300'),
    ('NVIDIA Blackwell Ultra GPU (B300-SXM-270GB)', 'nvidia_b300_hgx'),
    ('AMD Instinct MI355X', 'amd_mi355x'),
    ('AMD Instinct MI350X', 'amd_mi350x'),
    ('TPU-trillium', 'google_tpu_v6e'),
    ('NVIDIA H200-NVL-141GB', 'nvidia_h200_nvl'),
    ('H100 NVL Tensor Core GPU (PCIe)', 'nvidia_h100_nvl'),
    ('NVIDIA H100 80GB HBM3', 'nvidia_h100_sxm5'),
    ('NVIDIA RTX Pro 6000 SE PCIe 96GB', 'nvidia_rtx_pro_6000_se'),
    ('NVIDIA B200-SXM-180GB', 'nvidia_b200_hgx'),
    ('NVIDIA B200', 'nvidia_b200_hgx'),
    ('NVIDIA DGX B200', 'nvidia_b200_hgx'),
    ('NVIDIA GB200', 'nvidia_gb200'),
    ('NVIDIA GB200 NVL72', 'nvidia_gb200'),
    ('NVIDIA GB300', 'nvidia_gb300'),
    ('NVIDIA GB300 NVL72', 'nvidia_gb300'),
    ('NVIDIA HGX B300', 'nvidia_b300_hgx'),
    ('NVIDIA B300 SXM6 AC', 'nvidia_b300_hgx'),
    ('NVIDIA H200-SXM-141GB', 'nvidia_h200_sxm'),
    ('NVIDIA H200', 'nvidia_h200_sxm'),
    ('NVIDIA H200 NVL', 'nvidia_h200_nvl'),
    ('NVIDIA H100 NVL', 'nvidia_h100_nvl'),
    ('NVIDIA H100 PCIe', 'nvidia_h100_pcie'),
    ('NVIDIA A100 80GB PCIe', 'nvidia_a100_pcie_80gb'),
    ('AMD Instinct MI300X 192GB HBM3', 'amd_mi300x'),
    ('AMD Instinct MI300X OAM', 'amd_mi300x'),
    ('AMD MI325X', 'amd_mi325x'),
    ('AMD Instinct MI355X 288GB HBM3E', 'amd_mi355x'),
    ('TPU v6e', 'google_tpu_v6e'),
    ('tpu-v6e', 'google_tpu_v6e'),
    ('Trillium', 'google_tpu_v6e'),
    ('Cloud TPU v6e (Trillium)', 'google_tpu_v6e'),
    ('TPU7x', 'google_tpu7x'),
    ('tpu7x-256', 'google_tpu7x'),
    ('Ironwood', 'google_tpu7x'),
    ('Cloud TPU v7 (Ironwood)', 'google_tpu7x'),
    ('NVIDIA VR200', 'nvidia_vr200'),
    ('NVIDIA Rubin GPU (VR200)', 'nvidia_vr200'),
    ('NVIDIA Vera Rubin NVL72', 'nvidia_vr200'),
    ('NVIDIA DGX Vera Rubin NVL72', 'nvidia_vr200'),
    ('NVIDIA Vera Rubin Superchip', 'nvidia_vr200'),
    ('AMD Instinct MI455X', 'amd_mi455x'),
    ('AMD Instinct MI455X 432GB HBM4', 'amd_mi455x'),
    ('AWS Trainium3', 'aws_trainium3'),
    ('TPU v5p', 'google_tpu_v5p'),
    ('TPU v5e', 'google_tpu_v5e'),
    ('TPU v5 lite', 'google_tpu_v5e'),
    ('Intel Gaudi 3', 'intel_gaudi3'),
    ('Intel Gaudi 3 AI Accelerator', 'intel_gaudi3'),
    ('HL-325L', 'intel_gaudi3'),
    ('Intel Gaudi 3 HL-335', 'intel_gaudi3'),
    ('NVIDIA RTX PRO 6000 Blackwell Server Edition', 'nvidia_rtx_pro_6000_se'),
]
# fmt: on

#: Names that differ in one token and are different products (or no product).
NEAR_MISSES = [
    ("NVIDIA B200", "nvidia_b200_hgx"),
    ("NVIDIA GB200", "nvidia_gb200"),
    ("NVIDIA B300", "nvidia_b300_hgx"),
    ("NVIDIA GB300", "nvidia_gb300"),
    ("NVIDIA H100 NVL", "nvidia_h100_nvl"),
    ("NVIDIA H200 NVL", "nvidia_h200_nvl"),
    ("NVIDIA H200", "nvidia_h200_sxm"),
    ("NVIDIA GH200 144GB", "nvidia_gh200_144gb"),
    ("AMD Instinct MI300X", "amd_mi300x"),
    ("AMD Instinct MI325X", "amd_mi325x"),
    ("AMD Instinct MI350X", "amd_mi350x"),
    ("AMD Instinct MI355X", "amd_mi355x"),
    ("TPU v4", "google_tpu_v4"),
    ("TPU v5e", "google_tpu_v5e"),
    ("TPU v5p", "google_tpu_v5p"),
    ("TPU v6e", "google_tpu_v6e"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "nvidia_rtx_pro_6000_se"),
    ("NVIDIA RTX 6000 Ada Generation", ""),
    ("NVIDIA RTX A6000", "nvidia_rtx_a6000"),
    ("NVIDIA RTX A4000", ""),
    ("NVIDIA T4", "nvidia_t4"),
    ("NVIDIA T4G", ""),
    ("A4000", ""),
    ("AMD Instinct MI300A", ""),
    ("AMD Instinct MI355", ""),
    ("NVIDIA B100", ""),
    ("TPU v6", ""),
    ("TPU v7", "google_tpu7x"),  # Ironwood's one release
    ("TPU v8", ""),
    ("NVIDIA VR200", "nvidia_vr200"),
    ("NVIDIA Rubin Ultra", ""),
    ("NVIDIA Vera Rubin Ultra NVL576", ""),
    ("AMD Instinct MI455X", "amd_mi455x"),
    ("AMD Instinct MI430X", ""),
    ("AMD Instinct MI440X", ""),
    ("AWS Trainium3", "aws_trainium3"),
    ("AWS Trainium2", "aws_trainium2"),
    ("AWS Trainium", "aws_trainium"),
    ("AWS Inferentia2", ""),  # an inference chip: no training facts in the catalog
]

#: The ten names the reader and calibration used to place differently, and how they are
#: settled (docs/mlperf-reader.md, "Accelerators").
SETTLED = {
    "V100-SXM3-32GB": ("nvidia_v100_sxm2_32gb", "stand-in"),
    "V100-SXM3-32GB-H": ("nvidia_v100_sxm2_32gb", "stand-in"),
    "V100S-PCIe-32GB": ("nvidia_v100s_pcie_32gb", "exact"),
    "V100-32GB": ("", "unplaced"),
    "V100": ("", "unplaced"),
    "A100-40GB": ("nvidia_a100_sxm4_40gb", "stand-in"),
    "A100-80GB": ("nvidia_a100_sxm4_80gb", "stand-in"),
    "A100": ("", "unplaced"),
    "A10G": ("nvidia_a10g", "exact"),
    "H100-SXM5-96GB": ("nvidia_h100_sxm5_96gb", "exact"),
}


@pytest.mark.parametrize("name, aid, match, atype, vendor, gen, rank, year, modelled", ALIASES)
def test_every_alias_resolves_to_its_product_and_facts(
    name, aid, match, atype, vendor, gen, rank, year, modelled
):
    r = resolve_accelerator(name)
    assert (r.name, r.accelerator_id, r.match) == (name, aid, match)
    assert (r.accelerator_type, r.vendor, r.generation) == (atype, vendor, gen)
    assert (r.generation_rank, r.release_year, r.modelled) == (rank, year, modelled)


def test_every_alias_is_pinned_and_names_a_catalog_row():
    table = accelerator_aliases()
    assert sorted(table.index) == sorted(a[0] for a in ALIASES)
    ids = set(accelerator_catalog()["accelerator_id"])
    assert set(table["accelerator_id"]) <= ids
    assert set(table["match"]) <= {"exact", "stand-in", "unplaced"}
    # a stand-in or unplaced name says why
    assert (table.loc[table["match"] != "exact", "note"].str.len() > 20).all()


def test_one_fact_table():
    # the alias table holds names only; vendor, generation, year live in the catalog
    assert list(accelerator_aliases().columns) == ["accelerator_id", "match", "note"]
    cat = accelerator_catalog()
    assert cat["accelerator_id"].is_unique
    for col in (
        "vendor",
        "family",
        "generation",
        "generation_rank",
        "release_year",
        "accelerator_type",
    ):
        assert cat[col].notna().all(), col
    # one rank per (vendor, generation)
    assert (cat.groupby(["vendor", "generation"])["generation_rank"].nunique() == 1).all()


@pytest.mark.parametrize("name, aid, match", [(k, *v) for k, v in SETTLED.items()])
def test_the_ten_settled_names(name, aid, match):
    r = resolve_accelerator(name)
    assert (r.accelerator_id, r.match) == (aid, match)
    # calibration places it exactly where the resolver does: a prediction only where the
    # catalog models the product
    row = pd.DataFrame(
        {"accelerator": [name], "n_accelerators": [8], "n_nodes": [1], "accelerators_per_node": [8]}
    )
    pred = predict(row)
    assert np.isfinite(pred["predicted_time_to_train_min"].iloc[0]) == r.modelled
    # the note says why a row has no prediction; a modelled one's note never blames the name
    note = pred["prediction_note"].iloc[0]
    assert note.startswith("accelerator ") != r.modelled


@pytest.mark.parametrize("raw, memory, name, aid", LATER_ROUNDS)
def test_later_round_system_description_names(raw, memory, name, aid):
    r = resolve_accelerator(raw, memory=memory)
    assert (r.name, r.accelerator_id, r.match) == (name, aid, "exact")
    assert r.modelled == (aid not in {"nvidia_rtx_4090", "amd_radeon_rx_7900_xtx"})


@pytest.mark.parametrize("raw, aid", VENDOR_NAMES)
def test_vendor_names_are_modelled_products(raw, aid):
    r = resolve_accelerator(raw)
    assert (r.accelerator_id, r.match, r.modelled) == (aid, "exact", True)


def _variants(raw: str) -> list[str]:
    """The ways people vary one name: case, spaces for dashes and back, glued words,
    vendor and product words around it."""
    out = {raw, raw.lower(), raw.upper(), raw.replace("-", " "), raw.replace(" ", "-")}
    out |= {f"{raw} Tensor Core GPU", f"Accelerator ({raw})", f"  {raw}  "}
    out.add(raw.replace(" (", "(").replace(")", ") "))
    return sorted(out)


@pytest.mark.parametrize("raw, aid", VENDOR_NAMES + [(r[0], r[3]) for r in LATER_ROUNDS[:3]])
def test_spelling_variants_resolve_alike(raw, aid):
    got = {v: resolve_accelerator(v).accelerator_id for v in _variants(raw)}
    assert got == dict.fromkeys(got, aid)


def test_near_misses_resolve_apart():
    got = [resolve_accelerator(raw) for raw, _ in NEAR_MISSES]
    assert [r.accelerator_id for r in got] == [aid for _, aid in NEAR_MISSES]
    placed = [r.accelerator_id for r in got if r.accelerator_id]
    assert len(placed) == len(set(placed))
    # a model is never read inside a longer one, wherever it stands in the text
    for text, aid in [
        ("GB200 NVL72 (72x B200 GPUs in 36 superchips)", "nvidia_gb200"),
        ("Grace Blackwell GB300", "nvidia_gb300"),
        ("NVIDIA B2000", ""),
        ("NVIDIA GH200", ""),
    ]:
        assert resolve_accelerator(text).accelerator_id == aid, text


def test_architecture_words_without_a_model_are_unplaced():
    for raw, gen, year in [
        ("NVIDIA Blackwell GPU", "Blackwell", 2024),
        ("NVIDIA Blackwell Ultra GPU", "Blackwell", 2025),
        ("NVIDIA Hopper GPU", "Hopper", 2022),
        ("NVIDIA Grace Hopper Superchip", "Hopper", 2023),
        ("NVIDIA RTX PRO 6000 Blackwell", "Blackwell", 2025),
        ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "Blackwell", 2025),
        ("Intel Gaudi 3 PCIe (HL-338)", "Gaudi3", 2024),
        ("Intel Gaudi 3 HL-328", "Gaudi3", 2024),
        ("NVIDIA Rubin GPU", "Rubin", 2026),
        ("NVIDIA HGX Rubin NVL8", "Rubin", 2026),
        ("NVIDIA HGX Vera Rubin NVL8", "Rubin", 2026),
        ("AMD Instinct MI450", "CDNA5", 2026),
    ]:
        r = resolve_accelerator(raw)
        assert (r.match, r.accelerator_id, r.modelled) == ("unplaced", "", False), raw
        assert (r.generation, r.release_year) == (gen, year), raw
    # the system name gives a TPU without a version its version, Trillium included
    assert resolve_accelerator("TPU", hint="tpu-trillium-256").accelerator_id == "google_tpu_v6e"
    assert resolve_accelerator("TPU", hint="v5litepod-256").accelerator_id == "google_tpu_v5e"


@pytest.mark.parametrize("raw, memory, hint, name, aid, match", REAL_NAMES)
def test_real_system_description_names(raw, memory, hint, name, aid, match):
    r = resolve_accelerator(raw, memory=memory, hint=hint)
    assert (r.name, r.accelerator_id, r.match) == (name, aid, match)


def test_h200_is_known_to_reader_calibration_and_simulator(tmp_path):
    sysd = tmp_path / "v4.0" / "NVIDIA" / "systems"
    sysd.mkdir(parents=True)
    (sysd / "h200.json").write_text(
        json.dumps(
            {
                "division": "closed",
                "status": "available",
                "system_name": "NVIDIA H200",
                "accelerator_model_name": "NVIDIA H200-SXM5-141GB",
                "accelerators_per_node": "8",
                "number_of_nodes": "1",
                "accelerator_memory_capacity": "143771 MiB",
            }
        )
    )
    res = read_mlperf(tmp_path)
    row = res.table.iloc[0]
    assert not [w for w in res.warnings if "unknown accelerator" in w.reason]
    assert (row["accelerator"], row["accelerator_id"]) == ("H200-SXM5-141GB", "nvidia_h200_sxm")
    assert row["peak_tflops"] == pytest.approx(989) and row["mem_bw_tbps"] == pytest.approx(4.8)
    assert (row["generation"], row["generation_rank"], row["release_year"]) == ("Hopper", 4, 2024)
    pred = predict(
        pd.DataFrame(
            {
                "accelerator": ["NVIDIA H200-SXM5-141GB"],
                "n_accelerators": [8],
                "n_nodes": [1],
                "accelerators_per_node": [8],
            }
        )
    )
    assert pred["accelerator_id"].iloc[0] == "nvidia_h200_sxm"
    assert resolve_accelerators(["NVIDIA H200-SXM5-141GB"]) == ["nvidia_h200_sxm"]
    assert set(simulate(50, seed=0, accelerators=["NVIDIA H200-SXM5-141GB"])["accelerator_id"]) == {
        "nvidia_h200_sxm"
    }


@pytest.mark.parametrize(
    "raw, memory, aid, peak, bw",
    [
        ("NVIDIA Blackwell Ultra GPU (GB300)", "284208 MiB", "nvidia_gb300", 2500, 8.0),
        ("NVIDIA Blackwell Ultra GPU (B300-SXM-270GB)", "275040 MiB", "nvidia_b300_hgx", 2250, 8.0),
        ("AMD Instinct MI355X", "288 GB", "amd_mi355x", 2516.6, 8.0),
        ("TPU-trillium", "32GB", "google_tpu_v6e", 918, 1.638),
        ("TPU7x", "192GiB", "google_tpu7x", 2307, 7.38),
        ("NVIDIA Rubin GPU (VR200)", "288 GB", "nvidia_vr200", 4000, 19.2),
        ("AMD Instinct MI455X", "432 GB", "amd_mi455x", 5000, 23.3),
        ("AWS Trainium3", "144 GiB", "aws_trainium3", 671, 4.9),
        ("AWS Trainium2", "96 GiB", "aws_trainium2", 667, 2.9),
        ("NVIDIA H200 NVL 141GB", "96000 MiB", "nvidia_h200_nvl", 835.5, 4.8),
        ("NVIDIA RTX Pro 6000 SE PCIe 96GB", "96000 MiB", "nvidia_rtx_pro_6000_se", 500, 1.597),
    ],
)
def test_current_hardware_is_known_to_reader_and_calibration(tmp_path, raw, memory, aid, peak,
                                                              bw):
    sysd = tmp_path / "v5.1" / "Vendor" / "systems"
    sysd.mkdir(parents=True)
    (sysd / "sys.json").write_text(json.dumps({
        "division": "closed", "status": "available", "system_name": "a system",
        "accelerator_model_name": raw, "accelerators_per_node": "8", "number_of_nodes": "1",
        "accelerator_memory_capacity": memory}))
    res = read_mlperf(tmp_path)
    row = res.table.iloc[0]
    assert not [w for w in res.warnings if "unknown accelerator" in w.reason]
    assert row["accelerator_id"] == aid
    assert (row["peak_tflops"], row["mem_bw_tbps"]) == (pytest.approx(peak), pytest.approx(bw))
    pred = predict(pd.DataFrame({"accelerator": [raw], "n_accelerators": [8], "n_nodes": [1],
                                 "accelerators_per_node": [8]}))
    assert pred["accelerator_id"].iloc[0] == aid
    assert np.isfinite(pred["predicted_time_to_train_min"].iloc[0])


@pytest.mark.parametrize(
    "name, aid, match, atype, vendor, gen, rank, year, modelled", [a for a in ALIASES if a[8]]
)
def test_reader_calibration_and_simulator_agree(
    name, aid, match, atype, vendor, gen, rank, year, modelled
):
    pred = predict(
        pd.DataFrame(
            {
                "accelerator": [name],
                "n_accelerators": [1],
                "n_nodes": [1],
                "accelerators_per_node": [1],
            }
        )
    )
    assert pred["accelerator_id"].iloc[0] == aid
    # a selection by a catalog model name takes all its products ("H200": SXM and NVL)
    cat = accelerator_catalog()
    same_model = cat.loc[cat["model"].str.lower() == name.lower(), "accelerator_id"].tolist()
    assert resolve_accelerators([name]) == (same_model or [aid])
    assert aid in resolve_accelerators([name])


def test_selection_by_model_id_and_display_name():
    assert resolve_accelerators(["H100"]) == [
        "nvidia_h100_sxm5",
        "nvidia_h100_pcie",
        "nvidia_h100_nvl",
        "nvidia_h100_sxm5_96gb",
    ]
    assert resolve_accelerators(["NVIDIA H100 SXM5 80GB", "nvidia_h100_sxm5"]) == [
        "nvidia_h100_sxm5"
    ]
    with pytest.raises(UsageError, match=r"^accelerators: unknown accelerator 'H900'"):
        resolve_accelerators(["H900"])
    # a known product without performance facts cannot be simulated, and the message says so
    with pytest.raises(
        UsageError,
        match=r"^accelerators: 'NVIDIA A10G' has no peak or memory "
        r"bandwidth in the accelerator catalog",
    ):
        simulate(10, accelerators=["NVIDIA A10G"])
    # a model name selects only its modelled products
    assert "nvidia_h100_sxm5_96gb" not in set(
        simulate(300, seed=0, accelerators=["H100"])["accelerator_id"]
    )


def test_rules_for_marks_power_and_unknown_names():
    assert resolve_accelerator("Intel(R) Gaudi(R) 2 AI Accelerator").name == "Gaudi2"
    assert resolve_accelerator("NVIDIA V100-SXM3-32GB (450W)").name == "V100-SXM3-32GB-H"
    assert resolve_accelerator("NVIDIA V100-SXM3-32GB").name == "V100-SXM3-32GB"
    assert resolve_accelerator("NVIDIA H200-SXM-141GB").name == "H200-SXM5-141GB"
    r = resolve_accelerator("FooChip X9000")
    assert (r.name, r.accelerator_id, r.match, r.known) == ("FooChip X9000", "", "unknown", False)
    assert resolve_accelerator("N/A").match == "cpu"
    assert resolve_accelerator(float("nan")).match == "unknown"
    # a bare TPU without a version anywhere is not placed
    assert not resolve_accelerator("TPU", hint="pod").known


def test_user_catalog_names_resolve_against_it():
    own = (
        accelerator_catalog()
        .iloc[:1]
        .assign(accelerator_id="my_chip", display_name="My Chip", model="MyChip")
    )
    assert resolve_accelerator("My Chip", catalog=own).accelerator_id == "my_chip"
    assert resolve_accelerator("MyChip", catalog=own).accelerator_id == "my_chip"
    # a built-in alias whose product is not in the user's catalog is unknown there
    assert resolve_accelerator("NVIDIA L40S", catalog=own).accelerator_id == ""


_REAL = shared_data()


@pytest.mark.skipif(not _REAL.is_dir(), reason=f"shared MLPerf data not present at {_REAL}")
def test_every_real_description_name_is_pinned_and_known():
    pinned = {(r[0], r[1]) for r in REAL_NAMES}
    for sub in ("mlperf_resnet", "mlperf_training"):
        for dirpath, _dirs, files in os.walk(_REAL / sub / "raw"):
            for f in files:
                p = Path(dirpath) / f
                if not ((p.parent.name == "systems" and f.endswith(".json")) or f == "entry.json"):
                    continue
                fields, why = parse_system_description(p)
                assert fields is not None, (p, why)
                key = (fields["accelerator_raw"], fields["accelerator_memory"])
                assert key in pinned, (p, key)
                hint = f"{fields['system_name']} {p.stem if f != 'entry.json' else p.parent.name}"
                assert resolve_accelerator(key[0], memory=key[1], hint=hint).known, (p, key)


# id: family, generation, rank, year, dense bf16, fp8, fp4 (TFLOP/s), memory GB, TB/s,
# scale-up domain, scale-up GB/s per direction, link, accelerators per node
# fmt: off
NEWEST = {
    # NVIDIA Vera Rubin NVL72 over 72 GPUs: 288 / 1,260 / 2,520 PFLOPS dense, 1,400 TB/s,
    # NVLink 216 TB/s; the 3,600 PFLOPS of NVFP4 inference are sparse
    "nvidia_vr200": ("Rubin", "Rubin", 6, 2026, 4000, 17500, 35000, 288, 19.2, 72, 1500,
                     "nvlink6", 4),
    # AMD MI455X: 5.0 PF dense FP16/BF16, 20.1 PF FP8, 40.3 PF MXFP4, 23.3 TB/s, 3.6 TB/s
    "amd_mi455x": ("MI455X", "CDNA5", 4, 2026, 5000, 20100, 40300, 432, 23.3, 72, 1800,
                   "amd_ualoe_mi455x", 4),
    # AWS Trainium3: 671 BF16 / 2,517 MXFP8 and MXFP4 TFLOPS, 144 GiB at 4.9 TB/s
    "aws_trainium3": ("Trainium3", "Trainium3", 3, 2025, 671, 2517, 2517, 144, 4.9, 144,
                      1280, "neuronlink_v4", 4),
    # AWS Trainium2: 667 BF16 / 1,299 FP8 TFLOPS, 96 GiB at 2.9 TB/s, NeuronLink-v3 1.28 TB/s;
    # no FP4; 16 chips to a trn2.48xlarge
    "aws_trainium2": ("Trainium2", "Trainium2", 2, 2024, 667, 1299, np.nan, 96, 2.9, 16,
                      640, "neuronlink_v3", 16),
    # AWS Trainium (Trn1): 190 BF16 and cFP8 TFLOPS, 32 GiB at 820 GB/s, NeuronLink-v2 384 GB/s
    "aws_trainium": ("Trainium", "Trainium", 1, 2022, 190, 190, np.nan, 32, 0.82, 16, 192,
                     "neuronlink_v2", 16),
}
# fmt: on


@pytest.mark.parametrize("aid", list(NEWEST))
def test_newest_accelerators_hold_their_vendor_facts(aid):
    fam, gen, rank, year, bf16, fp8, fp4, mem, bw, dom, dom_bw, link, per_node = NEWEST[aid]
    r = accelerator_catalog().set_index("accelerator_id").loc[aid]
    assert (r["family"], r["generation"], r["generation_rank"], r["release_year"]) == (
        fam, gen, rank, year)
    got = [r[c] for c in ("bf16_dense_tflops", "fp8_dense_tflops", "fp4_dense_tflops", "mem_gb",
                          "mem_bw_tbps", "scaleup_domain", "scaleup_bw_GBps",
                          "max_accels_per_node")]
    np.testing.assert_allclose(got, [bf16, fp8, fp4, mem, bw, dom, dom_bw, per_node], rtol=1e-9)
    assert r["intra_link_id"] == link
    # the scale-up figure is half the bidirectional one, and the link table says the same
    assert r["scaleup_bw_GBps"] == r["intra_node_bw_GBps_bidir_per_gpu"] / 2
    links = interconnect_catalog().set_index("link_id")
    assert links.loc[link, "aggregate_GB_s_per_dir"] == dom_bw
    # the vendors publish no power figure and no catalog price: left empty, never guessed
    assert np.isnan(r["tdp_w"]) and np.isnan(r["price_typ_usd_gpu_hr"])
    assert all(s.startswith("https://") for s in r["spec_sources"].split(";"))


def test_rubin_rates_are_the_dense_rack_figures_over_72_gpus():
    r = accelerator_catalog().set_index("accelerator_id").loc["nvidia_vr200"]
    # NVIDIA's Vera Rubin NVL72 rows: FP16/BF16 288, FP8/FP6 training 1,260 and NVFP4
    # training 2,520 PFLOPS (dense); NVFP4 inference 3,600 PFLOPS is sparse and not a peak
    for col, rack_pf in (("bf16_dense_tflops", 288), ("fp8_dense_tflops", 1260),
                         ("fp4_dense_tflops", 2520)):
        assert r[col] * 72 / 1000 == pytest.approx(rack_pf), col
    assert r["fp4_dense_tflops"] < 3600 / 72 * 1000
    # memory: 20.7 TB at 1,400 TB/s per rack; NVLink 216 TB/s per rack
    assert r["mem_gb"] * 72 / 1000 == pytest.approx(20.7, rel=0.01)
    assert r["mem_bw_tbps"] * 72 == pytest.approx(1400, rel=0.02)
    assert r["intra_node_bw_GBps_bidir_per_gpu"] * 72 / 1000 == pytest.approx(216)
    # one tray: 2 Vera Rubin superchips, 4 GPUs on 2 Vera CPUs; 18 trays to the rack
    assert (r["host_cpu_fixed"], r["host_cpus_per_accel"]) == ("NVIDIA Vera", 0.5)
    assert r["scaleup_domain"] == 18 * r["max_accels_per_node"]


def test_mi455x_and_trainium3_rates_match_their_rack_figures():
    cat = accelerator_catalog().set_index("accelerator_id")
    # Helios: 2.9 EF MXFP4 over 72 MI455X
    assert cat.loc["amd_mi455x", "fp4_dense_tflops"] * 72 / 1e6 == pytest.approx(2.9, rel=0.01)
    # Trn3 Gen2 UltraServer: 362,448 MXFP8 and 96,624 BF16 TFLOPS, 705.6 TB/s over 144 chips
    t = cat.loc["aws_trainium3"]
    assert t["fp8_dense_tflops"] * 144 == 362448 and t["bf16_dense_tflops"] * 144 == 96624
    assert t["mem_bw_tbps"] * 144 == pytest.approx(705.6)


@pytest.mark.parametrize("name", [
    "NVIDIA Rubin GPU (VR200)", "NVIDIA Vera Rubin NVL72", "AMD Instinct MI455X",
    "AWS Trainium3", "AWS Trainium2"])
def test_newest_names_are_predicted(name):
    row = {"accelerator": [name], "n_accelerators": [8], "n_nodes": [1],
           "accelerators_per_node": [8], "global_batch_size": [8],
           "benchmark": ["llama2_70b_lora"]}
    p = predict(pd.DataFrame(row))
    assert p["predicted_time_to_train_min"].iloc[0] > 0, p["prediction_note"].iloc[0]
    assert "not in catalog" not in p["prediction_note"].iloc[0]
    # ranked on 4-per-node trays, as the racks are built
    p4 = predict(pd.DataFrame({**row, "n_nodes": [2], "accelerators_per_node": [4]}))
    assert np.isfinite(p4["predicted_time_to_train_min"].iloc[0])


def test_rubin_names_that_are_not_the_nvl72_gpu_stay_apart():
    # the HGX Rubin NVL8 board and a bare architecture name carry no performance facts;
    # Rubin Ultra and Rubin CPX are no VR200
    for raw in ("NVIDIA HGX Rubin NVL8", "NVIDIA HGX Vera Rubin NVL8", "Rubin CPX",
                "NVIDIA Rubin Ultra", "Vera Rubin Ultra NVL576"):
        r = resolve_accelerator(raw)
        assert r.accelerator_id == "" and not r.modelled, raw
    assert resolve_accelerators(["VR200", "NVIDIA Vera Rubin NVL72"]) == ["nvidia_vr200"]


@pytest.mark.parametrize("raw, memory, aid", [
    # a capacity no alias lists, within a tenth of the one product's memory: that product
    ("NVIDIA B300", "268 GB", "nvidia_b300_hgx"),
    ("NVIDIA B300", "279 GB", "nvidia_b300_hgx"),
    ("NVIDIA H200-SXM5", "143 GB", "nvidia_h200_sxm"),
    # farther than that: a different product or a mistake, not guessed
    ("NVIDIA B300", "180 GB", ""),
    ("NVIDIA H100", "85 GB", ""),
    # a base name that places no single product stays unplaced whatever the capacity
    ("NVIDIA A100-SXM4", "48 GB", ""),
])
def test_a_stated_capacity_near_the_products_places_it(raw, memory, aid):
    r = resolve_accelerator(raw, memory=memory)
    assert r.accelerator_id == aid
    if aid:
        gb = memory.split()[0]
        assert f"{gb} GB stated" in r.note and r.match == "exact"


@pytest.mark.parametrize("raw, aid", [
    # SkyPilot's bare workstation numbers are the RTX cards of those numbers
    ("A6000", "nvidia_rtx_a6000"), ("RTXA6000", "nvidia_rtx_a6000"), ("A5000", "nvidia_rtx_a5000"),
    ("A4000", ""),
    ("T4", "nvidia_t4"), ("Tesla T4", "nvidia_t4"), ("T4G", ""),
])
def test_cloud_catalog_names_of_workstation_and_inference_cards(raw, aid):
    assert resolve_accelerator(raw).accelerator_id == aid


def test_a_capacity_taken_as_the_products_is_said_in_the_prediction():
    rows = pd.DataFrame({"accelerator": ["NVIDIA B300 268GB", "NVIDIA B300"],
                         "n_accelerators": [8, 8], "n_nodes": [1, 1],
                         "accelerators_per_node": [8, 8]})
    notes = predict(rows)["prediction_note"].tolist()
    assert "accelerator memory: 268 GB stated, taken as the B300's 270 GB" in notes[0]
    assert "accelerator memory" not in notes[1]
