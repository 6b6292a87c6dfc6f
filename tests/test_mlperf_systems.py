"""System descriptions (flat, entry, mll_text, v4.0) and accelerator-name normalization."""

from pathlib import Path

import pytest

from gpurank.engine.sources.facts.accelerators import accelerator_aliases, normalize_accelerator
from gpurank.engine.sources.mlperf.systems import parse_system_description, parse_system_text, to_int

REPOS = Path(__file__).parent / "fixtures" / "mlperf" / "repos"


def test_flat_v40_with_framework_name():
    f, why = parse_system_description(REPOS / "training_results_v4.0/NVIDIA/systems/dgxh100_ngc24.04_mxnet.json")
    assert why == "" and f["desc_format"] == "flat"
    assert f["framework"] == "MXNet NVIDIA Release 24.04"
    assert f["accelerators_per_node"] == 8 and f["number_of_nodes"] == 1
    assert f["host_cores_per_node"] == 112
    assert f["accelerator_raw"] == "NVIDIA H100-SXM5-80GB"
    assert f["network"] == "8x 400Gb/s InfiniBand"


def test_flat_key_typos():
    f, _ = parse_system_text('{"divison": "close", "number of nodes": "2", "accelerators_per_node": 4, "accelerator_model_name": "x"}')
    assert f["division"] == "closed" and f["number_of_nodes"] == 2
    assert len(f["desc_notes"]) == 2


def test_entry_v05_tpu_slice_is_counted_in_chips():
    d = REPOS / "v0.5/v0.5.0/google/cloud_v3.8/resnet-tpuv3-8/results/tpu/entry.json"
    f, _ = parse_system_description(d)
    assert f["desc_format"] == "entry"
    assert (f["accelerators_per_node"], f["number_of_nodes"]) == (4, 1)
    assert f["host_cores_per_node"] is None  # num_cores 0 means unknown


def test_entry_alibaba():
    f, _ = parse_system_description(REPOS / "v0.6/Alibaba/results/sinian/entry.json")
    assert (f["accelerators_per_node"], f["number_of_nodes"]) == (4, 16)
    assert f["host_cores_per_node"] == 24 and f["host_processors_per_node"] is None
    assert f["network"] == "RoceV2 100Gb/s" and f["interconnect"] == ""
    assert f["accelerator_memory"] == "32 GB"


def test_mll_text_v06_nvidia():
    f, why = parse_system_description(REPOS / "v0.6/NVIDIA/systems/dgx1_ngc19.05_mxnet.json")
    assert why == "" and f["desc_format"] == "mll_text"
    assert f["system_name"] == "1xDGX-1 with V100"
    assert f["host_processors_per_node"] == 2 and f["host_processor_core_count"] == 20
    assert f["host_cpu"] == "Intel(R) Xeon(R) CPU E5-2698 v4 @ 2.20GHz"
    assert f["accelerator_raw"] == "Tesla V100-SXM2-16GB"
    assert f["division"] == "closed" and f["availability"] == "onprem"
    assert f["submitter_desc"] == "NVIDIA"


@pytest.mark.parametrize(
    "text, reason",
    [
        ("", "empty system description"),
        ('{"division": ', "malformed JSON"),
        ("[1, 2]", "not a JSON object"),
        ("hello: world", "neither JSON nor MLPerf log lines"),
    ],
)
def test_unreadable_descriptions(text, reason):
    f, why = parse_system_text(text)
    assert f is None and reason in why


@pytest.mark.parametrize("v, out", [("8", 8), (8, 8), ("8.0", 8), ("-", None), ("core_count", None), ("TODO", None), (2.5, None), (True, None)])
def test_to_int(v, out):
    assert to_int(v) == out


@pytest.mark.parametrize(
    "raw, memory, hint, name",
    [
        ("NVIDIA A100-SXM4-80GB (400W)", "", "", "A100-SXM4-80GB"),
        ("A100-SXM4-80GB", "", "", "A100-SXM4-80GB"),
        ("NVIDIA A100-SXM-80GB CTS", "", "", "A100-SXM4-80GB"),
        ("NVIDIA A100-PCIe-40GB(250W)", "", "", "A100-PCIe-40GB"),
        ("NVIDIA A100-PCIE-80GB (300W)", "", "", "A100-PCIe-80GB"),
        ("NVIDIA A100", "40G", "", "A100-40GB"),
        ("NVIDIA H100-SXM-80GB", "", "", "H100-SXM5-80GB"),
        ("NVIDIA H100-PCIe", "80 GB", "", "H100-PCIe-80GB"),
        ("Tesla V100-SXM3-H-32GB", "", "", "V100-SXM3-32GB-H"),
        ("Tesla V100-SXM3-32GB-H", "", "", "V100-SXM3-32GB-H"),
        ("Nvidia Tesla V100", "32GB", "", "V100-32GB"),
        ("NVIDIA A30-PCIE-24GB", "", "", "A30"),
        ("NVIDIA RTX A5000", "2x 24 GB", "", "RTX A5000"),
        ("tpuv2-512", "", "", "TPU v2"),
        ("TPU", "32GB", "tpu-v4-128", "TPU v4"),
        ("Habana Gaudi HL-205", "", "", "Gaudi"),
        ("Intel Gaudi2", "", "", "Gaudi2"),
        ("Graphcore Bow IPU", "", "", "Bow IPU"),
        ("Ascend 910 Pro A", "", "", "Ascend 910"),
        ("NVIDIA GeForce RTX 4090", "", "", "RTX 4090"),
    ],
)
def test_normalize_accelerator(raw, memory, hint, name):
    assert normalize_accelerator(raw, memory=memory, hint=hint) == (name, True)


def test_cpu_only_and_unknown_names():
    assert normalize_accelerator("N/A") == ("", True)
    assert normalize_accelerator("NA") == ("", True)
    assert normalize_accelerator("FooChip X9000") == ("FooChip X9000", False)


def test_alias_table_is_consistent():
    a = accelerator_aliases()
    assert a.index.is_unique
    assert set(a["match"]) <= {"exact", "stand-in", "unplaced"}
    for name in a.index:  # every listed name is a fixed point of the normalizer
        assert normalize_accelerator(name) == (name, True), name
