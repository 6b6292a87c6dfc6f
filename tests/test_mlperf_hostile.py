"""The MLPerf reader on hostile trees built in tmp_path: FIFOs, links to /dev/zero and out of
the tree, oversized files, JSON nested 100,000 deep, absurd counts and control characters.
Each must end in a warning (or one-line error) naming the file, never a hang, a traceback or a
negative count in the table."""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import pandas as pd
import pytest
from gpurank.engine.errors import DataError
from gpurank.engine.sources.mlperf import logs as mlperf_logs
from gpurank.engine.sources.mlperf import systems as mlperf_systems
from gpurank.engine.sources.mlperf.reader import read_mlperf
from gpurank.engine.sources.mlperf.systems import parse_system_text
from gpurank.engine.sources.facts.regular_files import UnreadableFile, excerpt, read_regular

FIX = Path(__file__).parent / "fixtures" / "mlperf" / "repos" / "training_results_v4.0" / "NVIDIA"
SYSTEM = "dgxh100_ngc24.04_mxnet"
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
needs_zero = pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")


def tree(tmp_path: Path, desc: dict | str | None = None) -> tuple[Path, Path, Path]:
    """A one-system round (v3.1/Acme) copied from the fixture; returns (root, desc, bench)."""
    root = tmp_path / "v3.1"
    sysd, bench = root / "Acme" / "systems", root / "Acme" / "results" / SYSTEM / "resnet"
    sysd.mkdir(parents=True)
    shutil.copytree(FIX / "results" / SYSTEM / "resnet", bench)
    d = sysd / f"{SYSTEM}.json"
    if desc is None:
        shutil.copy(FIX / "systems" / f"{SYSTEM}.json", d)
    else:
        d.write_text(desc if isinstance(desc, str) else json.dumps(desc))
    return root, d, bench


def read_bounded(path, seconds: float = 60.0, **kw):
    """read_mlperf in a thread: a hang fails the test instead of blocking the suite."""
    out: dict = {}

    def run():
        try:
            out["res"] = read_mlperf(path, **kw)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["exc"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"read_mlperf did not return within {seconds} s"
    if "exc" in out:
        raise out["exc"]
    return out["res"]


def reasons(res, name: str) -> list[str]:
    return [w.reason for w in res.warnings if Path(w.path).name == name]


def flat(**over) -> dict:
    d = json.loads((FIX / "systems" / f"{SYSTEM}.json").read_text())
    d.update(over)
    return d


# ------------------------------------------------------------------ files that are not files
@needs_fifo
def test_fifo_result_log_is_skipped_with_a_warning(tmp_path):
    root, _d, bench = tree(tmp_path)
    (bench / "result_0.txt").unlink()
    os.mkfifo(bench / "result_0.txt")
    res = read_bounded(root)
    assert reasons(res, "result_0.txt") == ["result log is a FIFO, not a regular file; skipped"]
    row = res.table.iloc[0]
    assert row["n_runs"] == 5 and row["n_runs_valid"] == 4


@needs_fifo
def test_fifo_description_and_scaling_are_skipped(tmp_path):
    root, d, bench = tree(tmp_path)
    d.unlink()
    os.mkfifo(d)
    (bench / "scaling.json").unlink()
    os.mkfifo(bench / "scaling.json")
    res = read_bounded(root)
    assert reasons(res, d.name) == [
        "unreadable system description: the file is a FIFO, not a regular file; skipped; "
        "hardware fields left empty"
    ]
    assert reasons(res, "scaling.json") == [
        "scaling.json is a FIFO, not a regular file; skipped; scaling factor 1 used"
    ]


@needs_zero
def test_links_to_dev_zero_are_not_read(tmp_path):
    root, d, bench = tree(tmp_path)
    for p in (bench / "result_1.txt", bench / "scaling.json", d):
        p.unlink()
        p.symlink_to("/dev/zero")
    res = read_bounded(root, seconds=30)
    assert reasons(res, "result_1.txt") == [
        "result log is a link to a device, not to a regular file; skipped"
    ]
    assert any("is a link to a device" in r for r in reasons(res, d.name))
    assert any("is a link to a device" in r for r in reasons(res, "scaling.json"))


def test_link_to_a_regular_file_is_read_and_folder_links_are_not_followed(tmp_path):
    root, d, bench = tree(tmp_path)
    outside = tmp_path / "outside.json"
    shutil.move(d, outside)
    d.symlink_to(outside)  # a link to a regular file, even outside the tree, is read
    (root / "Acme" / "results" / "loop").symlink_to(root, target_is_directory=True)
    (root / "Escape").symlink_to("/", target_is_directory=True)
    res = read_bounded(root)
    assert len(res.table) == 1 and res.table.iloc[0]["accelerator_id"] == "nvidia_h100_sxm5"
    assert reasons(res, "loop") == ["is a link to a folder; not followed"]
    assert reasons(res, "Escape") == ["is a link to a folder; not followed"]


def test_oversized_files_are_refused_before_reading(tmp_path, monkeypatch):
    root, d, bench = tree(tmp_path)
    monkeypatch.setattr(mlperf_logs, "MAX_LOG_BYTES", 1000)
    monkeypatch.setattr(mlperf_systems, "MAX_DESCRIPTION_BYTES", 100)
    res = read_bounded(root)
    size = (bench / "result_0.txt").stat().st_size
    assert reasons(res, "result_0.txt") == [
        f"result log has {size:,} bytes, more than the 1,000 a file may have here; skipped"
    ]
    assert reasons(res, d.name)[0].startswith("unreadable system description: the file has ")


def test_read_regular_limits_and_kinds(tmp_path):
    f = tmp_path / "f"
    f.write_bytes(b"x" * 10)
    assert read_regular(f, limit=10) == b"x" * 10
    with pytest.raises(UnreadableFile, match="has 10 bytes, more than the 9"):
        read_regular(f, limit=9)
    with pytest.raises(UnreadableFile, match="is a folder"):
        read_regular(tmp_path, limit=10)
    (tmp_path / "broken").symlink_to(tmp_path / "nowhere")
    with pytest.raises(UnreadableFile, match="broken link"):
        read_regular(tmp_path / "broken", limit=10)


# ------------------------------------------------------------------ deep nesting
def test_description_nested_100000_deep_is_a_warning(tmp_path):
    root, d, _b = tree(tmp_path, desc="[" * 100_000 + "]" * 100_000)
    res = read_bounded(root)
    assert reasons(res, d.name) == [
        "unreadable system description: JSON nested too deeply to parse; hardware fields left empty"
    ]
    d.write_text('{"accelerator_model_name": ' + '{"a": ' * 100_000 + "1" + "}" * 100_000 + "}")
    assert reasons(read_bounded(root), d.name)[0].startswith(
        "unreadable system description: JSON nested too deeply"
    )


def test_nested_values_below_the_parser_limit_are_not_walked():
    deep = json.loads("[" * 500 + "]" * 500)
    f, why = parse_system_text(json.dumps(flat(accelerator_model_name=deep, system_name=[deep])))
    assert why == "" and len(f["system_name"]) < 100


def test_mll_text_with_a_deep_literal_and_log_lines_nested_deep(tmp_path):
    f, why = parse_system_text('submission_entry: {"value": "' + "[" * 50_000 + "]" * 50_000 + '"}')
    assert f is None and "neither JSON nor MLPerf log lines" in why
    root, _d, bench = tree(tmp_path)
    with open(bench / "result_2.txt", "a") as fh:
        fh.write(
            ':::MLLOG {"key": "run_stop", "time_ms": 1, "value": '
            + "[" * 100_000
            + "]" * 100_000
            + "}\n"
        )
        fh.write(
            ':::MLLOG {"key": "global_batch_size", "time_ms": 1, "value": 1e999, '
            '"metadata": [1, 2]}\n'
        )
    res = read_bounded(root)
    assert any("malformed log line" in r for r in reasons(res, "result_2.txt"))


# ------------------------------------------------------------------ absurd numbers
@pytest.mark.parametrize(
    "field, value, message",
    [
        ("accelerators_per_node", "-8", "accelerators_per_node = '-8' is negative"),
        ("accelerators_per_node", -8, "accelerators_per_node = -8 is negative"),
        ("number_of_nodes", "0", "number_of_nodes = '0' is zero"),
        ("number_of_nodes", "-1", "number_of_nodes = '-1' is negative"),
        ("number_of_nodes", "1e300", "number_of_nodes = '1e300' is beyond any real system"),
        (
            "accelerators_per_node",
            10**40,
            "accelerators_per_node = 10000000000000000000000000000000000000000 is beyond",
        ),
        ("accelerators_per_node", "NaN", "accelerators_per_node = 'NaN' is not an integer"),
        ("number_of_nodes", "inf", "number_of_nodes = 'inf' is not an integer"),
        ("number_of_nodes", "-inf", "number_of_nodes = '-inf' is not an integer"),
        ("number_of_nodes", 2.5, "number_of_nodes = 2.5 is not an integer"),
        ("host_processors_per_node", "-2", "host_processors_per_node = '-2' is negative"),
        (
            "host_processor_core_count",
            "99999999",
            "host_processor_core_count = '99999999' is beyond",
        ),
    ],
)
def test_absurd_counts_are_warnings_and_never_enter_the_table(tmp_path, field, value, message):
    root, d, _b = tree(tmp_path, desc=flat(**{field: value}))
    res = read_bounded(root)
    got = reasons(res, d.name)
    assert any(r.startswith(message) for r in got), got
    row = res.table.iloc[0]
    for col in (
        "n_accelerators",
        "n_nodes",
        "accelerators_per_node",
        "host_processors_per_node",
        "host_cores_per_processor",
    ):
        v = row[col]
        assert pd.isna(v) or v > 0, (col, v)
    assert pd.isna(row["cpu_cores_per_accelerator"]) or row["cpu_cores_per_accelerator"] > 0


def test_total_beyond_any_real_system(tmp_path):
    root, d, _b = tree(tmp_path, desc=flat(accelerators_per_node="16000", number_of_nodes="90000"))
    res = read_bounded(root)
    assert any(
        "accelerators_per_node x number_of_nodes = 1,440,000,000 accelerators is beyond" in r
        for r in reasons(res, d.name)
    )
    assert pd.isna(res.table.iloc[0]["n_accelerators"])


def test_zero_accelerators_with_a_gpu_name(tmp_path):
    root, d, _b = tree(tmp_path, desc=flat(accelerators_per_node="0"))
    res = read_bounded(root)
    assert any(
        r.startswith("accelerators_per_node = 0 but accelerator_model_name is")
        for r in reasons(res, d.name)
    )
    assert pd.isna(res.table.iloc[0]["n_accelerators"])


def test_entry_format_counts_are_checked():
    f, _ = parse_system_text(
        json.dumps(
            {
                "hardware": "x",
                "nodes": [
                    {
                        "num_nodes": "-4",
                        "num_accelerators": "8",
                        "accelerator": "V100",
                        "cpu": "-2x Xeon",
                    }
                ],
            }
        )
    )
    assert f["number_of_nodes"] is None and f["accelerators_per_node"] == 8
    assert f["desc_problems"] == [
        "number_of_nodes = '-4' is negative (allowed: 1 to 100,000); left empty"
    ]


def test_digits_beyond_any_real_value_are_not_numbers(tmp_path):
    """Python refuses to turn more than 4,300 digits into an int: a round, a TPU slice or an
    epoch of that many digits is no round, slice or epoch, never a crash."""
    from gpurank.engine.commands.study_text import round_key
    from gpurank.engine.sources.facts.mlperf_rules import round_ordinal
    from gpurank.engine.sources.mlperf.discovery import round_key as _round_sort_key

    many = "9" * 5000
    assert round_ordinal(f"v{many}.1") is None and round_ordinal(f"v5.{many}") is None
    assert round_ordinal("v5.1") == 12 and round_ordinal("training_6.0.0") == 13
    assert round_key(f"v{many}.1") == (10**6, 0) == _round_sort_key(f"v{many}.0")
    f, _ = parse_system_text(json.dumps({"accelerator_model_name": f"tpu-v3-{many}",
                                         "accelerators_per_node": "8",
                                         "number_of_nodes": "1"}))
    assert f["accelerators_per_node"] == 8  # not a slice: the counts stand as written
    loose = mlperf_logs._accuracy_from_loose
    assert loose(f'{{"value": 0.76, "epoch": {many}}}', None) == (0.76, None)
    assert loose('{"value": 75.9%, "epoch": 41}', None) == (pytest.approx(0.759), 41)
    assert loose('{"value": 1.2.3, "epoch": 4}', None) == (None, 4)  # not a number
    root, d, _b = tree(tmp_path, desc=flat(accelerator_model_name=f"tpu-v3-{many}"))
    assert len(read_bounded(root).table) == 1


# ------------------------------------------------------------------ what messages quote
def test_control_characters_and_binary_are_escaped(tmp_path):
    evil = "\x1b]0;owned\x07\x1b[2J" + "X" * 500
    root, d, _b = tree(tmp_path, desc=flat(accelerator_model_name=evil))
    (root / "Acme" / "results" / ("bad\x1b[2Jname")).mkdir()
    res = read_bounded(root)
    for w in res.warnings:
        assert "\x1b" not in w.path and "\x1b" not in w.reason and "\x07" not in w.reason
        assert len(w.reason) < 300
    assert any("unknown accelerator name '\\x1b]0;owned" in w.reason for w in res.warnings)
    d.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00" + bytes(range(256)))
    got = reasons(read_bounded(root), d.name)
    assert got and all("\x00" not in r and "\x1a" not in r for r in got)


def test_excerpt_is_short_and_printable():
    assert excerpt("abc") == "'abc'"
    e = excerpt("\x1b" + "y" * 1000)
    assert "\x1b" not in e and len(e) <= 60
    assert excerpt(b"\xff\x00") == "'\\\\xff\\x00'"  # bytes: undecodable and NUL escaped


@needs_fifo
def test_published_scores_that_are_not_regular_files(tmp_path):
    root, _d, _b = tree(tmp_path)
    fifo = tmp_path / "summary.csv"
    os.mkfifo(fifo)
    with pytest.raises(DataError, match=r"published scores file is a FIFO, not a regular file$"):
        read_bounded(root, published_scores=fifo)
    binary = tmp_path / "b.csv"
    binary.write_bytes(b"\x1b[2J,\x00\xff\n1,2\n")
    with pytest.raises(DataError) as err:
        read_bounded(root, published_scores=binary)
    assert "\x1b" not in str(err.value) and "\n" not in str(err.value)
