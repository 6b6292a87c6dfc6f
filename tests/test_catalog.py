"""The accelerator catalog's facts, and a user's accelerators merged over it.

The rows of current hardware are pinned to their datasheet values (dense tensor peaks,
memory, scale-up domain, power) and checked against the vendors' sparse figures, so a sparse
number copied as dense cannot pass; the merge is checked for updates, additions, the defaults
it fills and every kind of bad input.
"""

import math

import numpy as np
import pandas as pd
import pytest
from gpurank.engine.sources.facts.catalog import (
    ACCELERATOR_NUMBERS,
    accelerator_catalog,
    interconnect_catalog,
    merge_accelerator_catalog,
)
from gpurank.engine.errors import DataError
from gpurank.engine.sources.facts.accelerators import resolve_accelerator, resolve_accelerators
from gpurank.engine.sources.model.calibrate import predict

# id: family, generation, rank, year, dense bf16, dense fp8 (nan: no fp8), memory GB, TB/s,
# scale-up domain, scale-up GB/s per direction, TDP W (nan: not published)
# fmt: off
NEW_ROWS = {
    "nvidia_b300_hgx": ("B300", "Blackwell", 5, 2025, 2250, 4500, 270, 8.0, 8, 900, 1100),
    "nvidia_gb300": ("B300", "Blackwell", 5, 2025, 2500, 5000, 279, 8.0, 72, 900, 1400),
    "amd_mi350x": ("MI355X", "CDNA4", 3, 2025, 2306.9, 4613.7, 288, 8.0, 8, 537.6, 1000),
    "amd_mi355x": ("MI355X", "CDNA4", 3, 2025, 2516.6, 5033.2, 288, 8.0, 8, 537.6, 1400),
    "google_tpu_v6e": ("TPU v6e", "TPU v6e", 5, 2024, 918, math.nan, 32, 1.638, 256, 400, math.nan),
    "google_tpu_v5e": ("TPU v5e", "TPU v5e", 4, 2023, 197, math.nan, 16, 0.819, 256, 200, math.nan),
    "nvidia_h200_nvl": ("H100", "Hopper", 4, 2024, 835.5, 1670.5, 141, 4.8, 4, 450, 600),
    "nvidia_rtx_pro_6000_se": ("RTX PRO 6000", "Blackwell", 5, 2025, 500, 1000, 96, 1.597, 1, 64,
                               600),
    # existing rows, completed
    "nvidia_b200_hgx": ("B200", "Blackwell", 5, 2024, 2250, 4500, 180, 8.0, 8, 900, 1000),
    "nvidia_gb200": ("B200", "Blackwell", 5, 2025, 2500, 5000, 186, 8.0, 72, 900, 1200),
    "intel_gaudi3": ("Gaudi3", "Gaudi3", 3, 2024, 1835, 1835, 128, 3.7, 8, 525, 900),
    "nvidia_h100_sxm5": ("H100", "Hopper", 4, 2022, 989, 1979, 80, 3.35, 8, 450, 700),
    "nvidia_h200_sxm": ("H100", "Hopper", 4, 2024, 989, 1979, 141, 4.8, 8, 450, 700),
    "amd_mi300x": ("MI300", "CDNA3", 2, 2023, 1307.4, 2614.9, 192, 5.3, 8, 448, 750),
    "google_tpu_v5p": ("TPU v5p", "TPU v5p", 4, 2023, 459, 459, 95, 2.765, 6144, 600, math.nan),
}
# fmt: on

#: The vendors' with-sparsity figures (TFLOP/s per accelerator: bf16, fp8), as printed on the
#: datasheets; the dense values must be half of them.
SPARSE = {
    "nvidia_b200_hgx": (4500, 9000),  # DGX B200: 36 / 72 PFLOPS over 8 GPUs
    "nvidia_b300_hgx": (4500, 9000),  # DGX B300: 36 / 72 PFLOPS over 8 GPUs
    "nvidia_gb200": (5000, 10000),  # GB200 NVL72: 360 / 720 PFLOPS over 72 GPUs
    "nvidia_gb300": (5000, 10000),  # GB300 NVL72: 360 / 720 PFLOPS over 72 GPUs
    "amd_mi350x": (4600, 9200),
    "amd_mi355x": (5000, 10100),
    "nvidia_h100_sxm5": (1979, 3958),
    "nvidia_h100_pcie": (1513, 3026),
    "nvidia_h100_nvl": (1671, 3341),
    "nvidia_h200_sxm": (1979, 3958),
    "nvidia_h200_nvl": (1671, 3341),
    "nvidia_rtx_pro_6000_se": (1000, 2000),
    "nvidia_l40s": (733, 1466),
    "nvidia_l4": (242, 485),
    "amd_mi300x": (2614.9, 5229.8),
    "amd_mi325x": (2614.9, 5229.8),
}

NO_FP8 = [
    "nvidia_v100_sxm2_16gb",
    "nvidia_a100_sxm4_80gb",
    "nvidia_a100_pcie_40gb",
    "nvidia_a30",
    "amd_mi250x",
    "google_tpu_v3",
    "google_tpu_v4",
    "google_tpu_v5e",
    "google_tpu_v6e",
]


@pytest.fixture(scope="module")
def cat():
    return accelerator_catalog().set_index("accelerator_id")


@pytest.mark.parametrize("aid", list(NEW_ROWS))
def test_current_hardware_rows_hold_their_datasheet_facts(cat, aid):
    fam, gen, rank, year, bf16, fp8, mem, bw, dom, dom_bw, tdp = NEW_ROWS[aid]
    r = cat.loc[aid]
    assert (r["family"], r["generation"], r["generation_rank"], r["release_year"]) == (
        fam, gen, rank, year)
    got = [r[c] for c in ("bf16_dense_tflops", "fp8_dense_tflops", "mem_gb", "mem_bw_tbps",
                          "scaleup_domain", "scaleup_bw_GBps", "tdp_w")]
    np.testing.assert_allclose(got, [bf16, fp8, mem, bw, dom, dom_bw, tdp], rtol=1e-9)
    for col in ("vendor", "model", "display_name", "accelerator_type", "host_interface",
                "intra_link_id", "spec_confidence"):
        assert isinstance(r[col], str) and r[col].strip(), (aid, col)
    assert r["spec_confidence"] in ("high", "medium", "low")
    # every number has a source: a vendor page or a source key of the shared reference
    sources = [s for s in str(r["spec_sources"]).split(";") if s.strip()]
    assert sources and all(s.startswith("https://") or s[:1] in "SNV" for s in sources), sources
    assert r["max_accels_per_node"] >= 1 and r["dali_supported"] in (0, 1)
    assert resolve_accelerator(aid).modelled


def test_grace_parts_have_a_grace_per_two_gpus(cat):
    for aid in ("nvidia_gb200", "nvidia_gb300"):
        assert cat.loc[aid, "host_cpu_fixed"] == "NVIDIA Grace"
        assert cat.loc[aid, "host_cpus_per_accel"] == 0.5
        assert cat.loc[aid, "max_accels_per_node"] == 4


@pytest.mark.parametrize("aid", list(SPARSE))
def test_dense_peaks_are_half_the_sparse_figures(cat, aid):
    for col, sparse in zip(("bf16_dense_tflops", "fp8_dense_tflops"), SPARSE[aid], strict=True):
        dense = cat.loc[aid, col]
        assert dense < sparse, (aid, col)
        # vendors round: within 2% of half the sparse figure
        assert dense == pytest.approx(sparse / 2, rel=0.02), (aid, col)


def test_precision_ladder_and_scale_up_of_every_modelled_row(cat):
    modelled = cat[(pd.to_numeric(cat["bf16_dense_tflops"], errors="coerce")
                    .fillna(cat["fp16_dense_tflops"]) > 0) & (cat["mem_bw_tbps"] > 0)]
    assert len(modelled) >= 38
    for aid, r in modelled.iterrows():
        peak = r["bf16_dense_tflops"] if r["bf16_dense_tflops"] > 0 else r["fp16_dense_tflops"]
        # a narrower format is never slower; fp4 only where fp8 is given
        assert not r["fp8_dense_tflops"] < peak, aid
        assert not r["fp4_dense_tflops"] < r["fp8_dense_tflops"], aid
        assert math.isnan(r["fp4_dense_tflops"]) or r["fp8_dense_tflops"] > 0, aid
        assert r["scaleup_domain"] >= 1 and r["scaleup_domain"] == int(r["scaleup_domain"]), aid
        assert r["scaleup_bw_GBps"] > 0, aid
        # the catalog names a link the interconnect table has
        assert r["intra_link_id"] in set(interconnect_catalog()["link_id"]), aid
    for aid in NO_FP8:
        assert math.isnan(cat.loc[aid, "fp8_dense_tflops"]), aid
    # rack-scale NVLink: 72 GPUs over 4-GPU trays
    for aid in ("nvidia_gb200", "nvidia_gb300"):
        assert cat.loc[aid, "scaleup_domain"] > cat.loc[aid, "max_accels_per_node"]


def test_identity_rows_stay_unmodelled(cat):
    for aid in ("nvidia_a10g", "nvidia_h100_sxm5_96gb", "google_tpu_v2", "intel_gaudi"):
        assert not resolve_accelerator(aid).modelled
        assert math.isnan(cat.loc[aid, "scaleup_domain"])


# -- merge_accelerator_catalog ---------------------------------------------------------------

USER_CSV = """accelerator_id,vendor,model,display_name,bf16_dense_tflops,fp8_dense_tflops,mem_gb,mem_bw_tbps,scaleup_domain,scaleup_bw_GBps,tdp_w,release_year
acme_x1,Acme,X1,Acme X1 OAM,1500,3000,192,6.4,8,400,900,2026
nvidia_h100_sxm5,,,,,,,3.5,,,,
"""


@pytest.fixture
def user_csv(tmp_path):
    p = tmp_path / "my_accelerators.csv"
    p.write_text(USER_CSV, encoding="utf-8")
    return p


def test_merge_adds_and_updates_rows(user_csv):
    base = accelerator_catalog()
    out = merge_accelerator_catalog(user_csv)
    assert list(out.columns) == list(base.columns)
    assert len(out) == len(base) + 1
    assert out["accelerator_id"].tolist()[: len(base)] == base["accelerator_id"].tolist()
    m = out.set_index("accelerator_id")
    # an update sets the given field and keeps the others
    h100 = m.loc["nvidia_h100_sxm5"]
    assert h100["mem_bw_tbps"] == 3.5 and h100["bf16_dense_tflops"] == 989
    assert h100["display_name"] == "NVIDIA H100 SXM5 80GB" and h100["family"] == "H100"
    assert h100["spec_sources"].endswith(f";user:{user_csv}")
    # a new row: its numbers, and identity defaults where the table has none
    x1 = m.loc["acme_x1"]
    assert (x1["bf16_dense_tflops"], x1["fp8_dense_tflops"], x1["mem_gb"], x1["tdp_w"]) == (
        1500, 3000, 192, 900)
    assert (x1["family"], x1["generation"], x1["accelerator_type"]) == ("X1", "X1", "gpu")
    assert x1["display_name"] == "Acme X1 OAM" and x1["release_year"] == 2026
    assert (x1["max_accels_per_node"], x1["intra_link_id"], x1["dali_supported"]) == (
        8, "pcie_gen4_x16", 0)
    assert "filled by gpurank: family=X1, generation=X1, accelerator_type=gpu" in x1["extra_source"]
    assert "display_name" not in x1["extra_source"]
    assert x1["spec_sources"] == f"user:{user_csv}"
    # numeric columns stay numeric
    for col in ACCELERATOR_NUMBERS:
        assert pd.api.types.is_float_dtype(out[col]), col
    # the shipped catalog is not changed by a merge
    assert accelerator_catalog().equals(base)


def test_merge_defaults_when_only_the_id_and_facts_are_given():
    out = merge_accelerator_catalog(pd.DataFrame({
        "accelerator_id": ["lab_card"], "bf16_dense_tflops": [100.0], "mem_bw_tbps": [1.0],
        "vendor": ["NVIDIA"]}))
    r = out.set_index("accelerator_id").loc["lab_card"]
    assert (r["model"], r["display_name"], r["family"], r["generation"]) == ("lab_card",) * 4
    assert r["dali_supported"] == 1
    assert r["extra_source"].startswith("user:DataFrame; filled by gpurank: display_name=lab_card")


def test_user_names_resolve_through_the_merged_catalog(user_csv):
    out = merge_accelerator_catalog(user_csv)
    for name in ("acme_x1", "Acme X1 OAM", "X1", "acme x1 oam"):
        r = resolve_accelerator(name, catalog=out)
        assert (r.accelerator_id, r.match, r.modelled, r.vendor) == ("acme_x1", "exact", True,
                                                                     "Acme"), name
        assert (r.family, r.release_year) == ("X1", 2026)
    assert resolve_accelerators(["X1", "NVIDIA B200"], out) == ["acme_x1", "nvidia_b200_hgx"]
    # the shipped catalog does not know it
    assert not resolve_accelerator("X1").known
    # a built-in name still resolves in the merged catalog, to the updated facts
    assert resolve_accelerator("NVIDIA H100 80GB HBM3", catalog=out).accelerator_id == (
        "nvidia_h100_sxm5")


def test_prediction_uses_the_merged_catalog(user_csv):
    table = pd.DataFrame({"accelerator": ["X1", "Acme X1 OAM"], "n_accelerators": [8, 8],
                          "n_nodes": [1, 1], "accelerators_per_node": [8, 8]})
    without = predict(table)
    assert (without["accelerator_id"].fillna("") == "").all()
    assert without["predicted_time_to_train_min"].isna().all()
    pred = predict(table, accelerator_table=merge_accelerator_catalog(user_csv))
    assert pred["accelerator_id"].tolist() == ["acme_x1", "acme_x1"]
    assert np.isfinite(pred["predicted_time_to_train_min"]).all()


def test_merge_over_another_base(tmp_path):
    base = accelerator_catalog().iloc[:3]
    out = merge_accelerator_catalog(pd.DataFrame({"accelerator_id": ["x"], "mem_gb": [8]}),
                                    base=base)
    assert out["accelerator_id"].tolist() == base["accelerator_id"].tolist() + ["x"]


@pytest.mark.parametrize(
    "column, value, allowed",
    [
        ("mem_bw_tbps", "fast", "a finite number > 0 (TB/s)"),
        ("mem_bw_tbps", "0", "a finite number > 0 (TB/s)"),
        ("bf16_dense_tflops", "-989", "a finite number > 0 (TFLOP/s)"),
        ("fp8_dense_tflops", "inf", "a finite number > 0 (TFLOP/s)"),
        ("tdp_w", "nan", "a finite number > 0 (W)"),
        ("mem_gb", "1,000", "a finite number > 0 (GB)"),
        ("scaleup_domain", "7.5", "a whole number >= 1 (accelerators)"),
        ("scaleup_domain", "0", "a whole number >= 1 (accelerators)"),
        ("max_accels_per_node", "eight", "a whole number >= 1 (accelerators)"),
        ("release_year", "25", "a whole number from 1950 to 2100"),
        ("dali_supported", "yes", "0 or 1"),
        ("accelerator_type", "fpga", "gpu, tpu, other"),
    ],
)
def test_merge_refuses_a_bad_value_in_one_line(tmp_path, column, value, allowed):
    p = tmp_path / "bad.csv"
    p.write_text(f"accelerator_id,{column}\nnvidia_l4,\nacme_x1,\"{value}\"\n", encoding="utf-8")
    with pytest.raises(DataError) as err:
        merge_accelerator_catalog(p)
    msg = str(err.value)
    assert msg == (f"accelerators table '{p}': accelerator_id 'acme_x1', column '{column}' has "
                   f"'{value}'; allowed: {allowed} or an empty cell")
    assert "\n" not in msg


def test_merge_refuses_unknown_columns_naming_the_closest():
    for col, near in [("mem_bw_tbs", "mem_bw_tbps"), ("fp8_tflops", "fp8_dense_tflops"),
                      ("Scaleup_Domain", "scaleup_domain"), ("TDP", "tdp_w")]:
        with pytest.raises(DataError) as err:
            merge_accelerator_catalog(pd.DataFrame({"accelerator_id": ["a"], col: [1]}))
        assert str(err.value) == (
            f"accelerators table (DataFrame) has unknown column '{col}'; the closest catalog "
            f"column is '{near}' (a user catalog takes the columns of the accelerator catalog)")


def test_merge_refuses_tables_it_cannot_place(tmp_path):
    cases = [
        (pd.DataFrame({"mem_gb": [8]}), "is missing column 'accelerator_id'"),
        (pd.DataFrame({"accelerator_id": []}), "has no rows"),
        (pd.DataFrame({"accelerator_id": ["a", " "]}), "row 2 has no accelerator_id"),
        (pd.DataFrame({"accelerator_id": ["a", "b", "a"]}),
         "accelerator_id 'a' is given twice (rows 1 and 3)"),
        (tmp_path / "absent.csv", "does not exist"),
        (tmp_path, "is a folder, not a regular file"),
    ]
    for table, part in cases:
        with pytest.raises(DataError, match=None) as err:
            merge_accelerator_catalog(table)
        assert part in str(err.value) and "\n" not in str(err.value), (part, err.value)


def test_merge_reads_spreadsheet_exports(tmp_path):
    # a byte-order mark, Windows line ends and a trailing comma are not columns
    p = tmp_path / "excel.csv"
    p.write_bytes("\ufeffaccelerator_id,mem_gb,\r\nacme_x2,64,\r\n".encode())
    out = merge_accelerator_catalog(p)
    assert out.set_index("accelerator_id").loc["acme_x2", "mem_gb"] == 64
    p.write_bytes(b"accelerator_id,mem_gb,\nacme_x2,64,7\n")
    with pytest.raises(DataError, match=r"column 3 has no name but holds values"):
        merge_accelerator_catalog(p)


def test_merged_catalog_feeds_the_loaders():
    out = merge_accelerator_catalog(pd.DataFrame({
        "accelerator_id": ["acme_x1"], "bf16_dense_tflops": [1500], "mem_bw_tbps": [6.4]}))
    again = accelerator_catalog(out)
    assert again["accelerator_id"].tolist() == out["accelerator_id"].tolist()
    # a full user table without the newer columns still has them (unknown)
    old = accelerator_catalog().drop(columns=["fp8_dense_tflops", "fp4_dense_tflops",
                                              "scaleup_domain", "scaleup_bw_GBps"])
    filled = accelerator_catalog(old)
    for col in ("fp8_dense_tflops", "fp4_dense_tflops", "scaleup_domain", "scaleup_bw_GBps"):
        assert filled[col].isna().all()
