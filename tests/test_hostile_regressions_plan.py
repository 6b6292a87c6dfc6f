"""Hostile inputs to ``gpurank plan``: model cards with values past any model trained, and
offers catalogs with a repeated column or a folder holding entries that are not files."""

from __future__ import annotations

import os

import pytest
from gpurank.engine.cli import main
from gpurank.engine.commands.plan import plan_offers, plan_spec
from gpurank.engine.errors import DataError, UsageError
from gpurank.engine.sources.facts.benchmarks import workload_for_benchmark
from gpurank.engine.sources.facts.offers import read_offers
from gpurank.engine.sources.model.card import read_card, workload_arg

_CARD = """name = "c1"
[model]
architecture = "{arch}"
parameters = {parameters}
{shape}
[training]
{length}
"""
_DENSE = "layers = 40\nhidden_size = 5120\nsequence_length = 4096\nvocabulary = 32000"
_HEADER = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,"
           "GpuInfo,SpotPrice")
_ROW = ("gpu_1x_h100_sxm5,H100,1,26,200,2.49,us-east-1,"
        "\"{'Gpus': [{'MemoryInfo': {'SizeInMiB': 81920}}]}\",")


def _card(tmp_path, *, arch="dense-transformer", parameters="13e9", shape=_DENSE,
          length="tokens = 300e9"):
    p = tmp_path / "card.toml"
    p.write_text(_CARD.format(arch=arch, parameters=parameters, shape=shape, length=length))
    return p


# -- model cards: magnitudes past any model trained -----------------------------------------------
@pytest.mark.parametrize("kw, field", [
    (dict(parameters="1e308"), "parameters"),          # was an OverflowError traceback
    (dict(length="tokens = 1e308"), "tokens"),         # was "cannot convert float NaN"
    (dict(arch="cnn", shape="forward_flops = 1e308", parameters="25e6",
          length="samples = 1e6"), "forward_flops"),   # was a ParamError without the file
    (dict(arch="cnn", shape="forward_flops = 4e9", parameters="25e6",
          length="samples = 1e300"), "samples"),       # was accepted
    (dict(length="tokens = 1e9\nglobal_batch = 9223372036854775807"), "global_batch"),
    (dict(shape=_DENSE.replace("4096", "1000000000")), "sequence_length"),
])
def test_a_card_value_past_any_model_is_a_data_error_naming_the_field(tmp_path, kw, field):
    p = _card(tmp_path, **kw)
    with pytest.raises(DataError) as exc:
        workload_arg(str(p))
    msg = str(exc.value)
    assert str(p) in msg and msg.split(": ", 1)[1].startswith(field), msg
    assert "\n" not in msg and "]; got" in msg


def test_a_card_at_the_largest_sizes_still_gives_finite_numbers(tmp_path):
    p = _card(tmp_path, parameters="1e15", length="tokens = 1e15")
    wl = workload_arg(str(p))
    assert 0 < wl.flops_per_sample < float("inf") and wl.max_global_batch >= 1
    assert read_card(p).parameters == 1e15


def test_the_cli_refuses_a_huge_card_with_exit_3(tmp_path, capsys):
    p = _card(tmp_path, parameters="1e308")
    code = main(["plan", "--workload", str(p), "--offers", str(tmp_path / "none.csv"),
                 "--out", str(tmp_path / "o"), "--no-report"])
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert code == 3 and len(err) == 1 and "parameters" in err[0] and "1e+308" in err[0]


# -- offers catalogs ------------------------------------------------------------------------------
@pytest.mark.parametrize("header, row, column", [
    (_HEADER + ",Price", _ROW + ",9.9", "Price"),
    ("provider,instance,accelerator,accelerators_per_instance,usd_per_hour,region,usd_per_hour",
     "x,y,H100 SXM,8,20,us,-5", "usd_per_hour"),
])
def test_a_repeated_column_is_refused_not_read_as_its_first(tmp_path, header, row, column):
    p = tmp_path / "vms.csv"
    p.write_text(f"{header}\n{row}\n")
    with pytest.raises(DataError, match=f"column '{column}' more than once"):
        read_offers(p)


def test_a_catalog_folder_skips_entries_that_are_not_files_and_says_so(tmp_path):
    (tmp_path / "aws").mkdir()
    (tmp_path / "aws" / "vms.csv").write_text(f"{_HEADER}\n{_ROW}\n")
    (tmp_path / "fifo").mkdir()
    os.mkfifo(tmp_path / "fifo" / "vms.csv")
    (tmp_path / "dir" / "vms.csv").mkdir(parents=True)
    (tmp_path / "zero").mkdir()
    (tmp_path / "zero" / "vms.csv").symlink_to("/dev/zero")
    offers = read_offers(tmp_path)
    assert len(offers.table) == 1 and offers.files == (str(tmp_path / "aws" / "vms.csv"),)
    said = " ".join(offers.notes())
    for kind in ("a FIFO", "a folder", "a link to a device"):
        assert kind in said, said
    assert "catalog files skipped" in said and "; skipped" not in said


def test_a_folder_of_only_special_files_and_a_special_file_are_one_line(tmp_path):
    (tmp_path / "c").mkdir()
    os.mkfifo(tmp_path / "c" / "vms.csv")
    with pytest.raises(DataError, match="holds no readable catalog file"):
        read_offers(tmp_path)
    with pytest.raises(DataError) as exc:
        read_offers(tmp_path / "c" / "vms.csv")
    assert "is a FIFO" in str(exc.value) and "skipped" not in str(exc.value)


# -- model cards: fields that contradict each other, or that nothing would read -------------------
@pytest.mark.parametrize("extra, field", [
    ("[fine_tune]\nfrozen_base = true\n", "lora_rank"),   # was planned as full training
    ("[fine_tune]\n", "lora_rank"),                        # an empty table: the same
])
def test_a_frozen_base_without_adapters_is_refused(tmp_path, extra, field):
    p = _card(tmp_path)
    p.write_text(p.read_text() + extra)
    with pytest.raises(DataError, match=f"card.toml': {field} is required in \\[fine_tune\\]"):
        read_card(p)


@pytest.mark.parametrize("length, field", [
    # both sized the data set; dataset_samples won silently
    ('epochs = 2\ndataset = "imagenet-1k"\ndataset_samples = 5', "dataset_samples"),
    # a batch larger than all the samples trained on: less than one step
    ("samples = 10\nglobal_batch = 4096", "global_batch"),
])
def test_contradictory_training_fields_are_refused(tmp_path, length, field):
    with pytest.raises(DataError, match=f"card.toml': {field} "):
        read_card(_card(tmp_path, length=length))


def test_an_empty_card_name_is_refused_not_replaced_by_the_file_name(tmp_path):
    p = _card(tmp_path)
    p.write_text(p.read_text().replace('name = "c1"', 'name = ""'))
    with pytest.raises(DataError, match="name must be a name of 1-80 printable characters"):
        read_card(p)


def test_a_special_card_file_is_an_error_that_does_not_say_skipped(tmp_path):
    os.mkfifo(tmp_path / "fifo.toml")
    (tmp_path / "dir.toml").mkdir()
    for name in ("fifo.toml", "dir.toml"):
        with pytest.raises(DataError) as exc:
            read_card(tmp_path / name)
        assert "not a regular file" in str(exc.value) and "skipped" not in str(exc.value)


# -- plan flags -----------------------------------------------------------------------------------
@pytest.mark.parametrize("kw, flag", [
    (dict(criteria=""), "criteria"),      # was the default criteria, silently
    (dict(criteria="  "), "criteria"),
    (dict(require=""), "require"),        # was no limit, silently
    (dict(require=" ", budget_usd=10.0), "require"),
])
def test_an_empty_criteria_or_require_flag_is_a_usage_error(kw, flag):
    with pytest.raises(UsageError, match=f"^{flag} is empty; write e.g. "):
        plan_spec(**kw)


@pytest.mark.parametrize("name", ["", " "])
def test_an_empty_workload_name_is_no_workload(name):
    # "" matched the empty benchmark list of a workload without an MLPerf benchmark and
    # planned gpt_oss_120b
    assert workload_for_benchmark(name) is None
    with pytest.raises(UsageError, match="is not a known workload"):
        workload_arg(name)


def test_an_empty_offers_path_does_not_read_the_current_folder(tmp_path, monkeypatch):
    (tmp_path / "aws").mkdir()
    (tmp_path / "aws" / "vms.csv").write_text(f"{_HEADER}\n{_ROW}\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match="--offers is empty"):
        read_offers("")


@pytest.mark.parametrize("row", [
    ",h8,H100-SXM5-80GB,8,24,us",        # no provider: was an offer named ''
    "Acme,,H100-SXM5-80GB,8,24,us",      # no instance: nothing to rent
])
def test_an_offer_without_a_provider_or_instance_is_skipped_and_counted(tmp_path, row):
    p = tmp_path / "offers.csv"
    ok = "Acme,h8,H100-SXM5-80GB,8,24,eu"
    p.write_text("provider,instance,accelerator,accelerators_per_instance,usd_per_hour,"
                 f"region\n{ok}\n{row}\n")
    offers = read_offers(p)
    assert offers.table["instance"].tolist() == ["h8"]
    assert offers.table["provider"].tolist() == ["Acme"]
    assert any("1 catalog rows skipped: no provider or no instance name" in s
               for s in offers.skipped), offers.skipped


_MOE = ('layers = 32\nhidden_size = 4096\nsequence_length = 4096\nvocabulary = 32000\n'
        'experts = 8\nexperts_per_token = {k}\nactive_parameters = {active}')


def test_moe_active_parameters_below_the_routed_share_are_refused(tmp_path):
    # 1e9 active of 47e9 with 7 of 8 experts per token: the shared layers would hold -275e9
    # parameters and a replica a negative number of weights
    p = _card(tmp_path, arch="moe-transformer", parameters="47e9",
              shape=_MOE.format(k=7, active="1e9"))
    with pytest.raises(DataError, match=r"active_parameters must be a finite number in "
                                        r"\[41125000000, 47000000000\]; got 1000000000.0"):
        read_card(p)
    ok = _card(tmp_path, arch="moe-transformer", parameters="47e9",
               shape=_MOE.format(k=2, active="11.75e9"))   # no shared layers: the boundary
    assert read_card(ok).active_parameters == 11.75e9


def test_a_lora_rank_above_the_hidden_size_is_refused(tmp_path):
    p = _card(tmp_path, length="tokens = 1e9")
    p.write_text(p.read_text() + "[fine_tune]\nlora_rank = 8192\n")   # hidden_size 5120
    with pytest.raises(DataError, match=r"lora_rank must be an integer in \[1, 5120\]; got 8192"):
        read_card(p)
    p.write_text(p.read_text().replace("8192", "16"))
    assert workload_arg(str(p)).allreduce_params > 0


@pytest.mark.parametrize("kw, shown", [
    # 1e307 hours in minutes overflowed to inf, refused as a --require the user never wrote
    (dict(deadline_h=1e307), "--deadline-h must be None or a finite number in (0, 1000000000]"),
    (dict(budget_usd=1e300),
     "--budget-usd must be None or a finite number in (0, 1000000000000000]"),
])
def test_a_budget_or_deadline_past_any_run_is_refused_by_its_own_name(kw, shown):
    with pytest.raises(UsageError) as exc:
        plan_offers(None, None, **kw)
    assert exc.value.for_flag(lambda n: "--" + n.replace("_", "-")).startswith(shown)


def test_plan_out_over_its_own_input_is_refused_even_with_overwrite(tmp_path, capsys):
    cat = tmp_path / "catalogs" / "aws"
    cat.mkdir(parents=True)
    (cat / "vms.csv").write_text(f"{_HEADER}\n{_ROW}\n")
    card = _card(tmp_path)
    for out, offers, workload in ((tmp_path / "catalogs", cat / "vms.csv", "llama31_8b"),
                                  (cat, cat, "llama31_8b"),
                                  (tmp_path, cat, str(card))):
        code = main(["plan", "--workload", workload, "--offers", str(offers), "--out",
                     str(out), "--overwrite", "--no-report"])
        err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
        assert code == 2 and len(err) == 1 and "holds the input" in err[0], err
    assert (cat / "vms.csv").read_text().startswith(_HEADER) and card.exists()
