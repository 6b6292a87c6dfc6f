"""The Dask path equals the in-memory path (Engine(backend="cpu").analyze), row for row."""

import os

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

import dask.dataframe as dd
from dask import delayed
from gpurank.engine import Engine
from gpurank.engine.distributed import DistributedError, analyze_dataset, start_dask
from gpurank.engine.errors import GpurankError, UsageError
from gpurank.engine.params import ParamError
from gpurank.engine.spec import AnalysisSpec, parse_criteria
from gpurank.engine.summary import build_summary
from gpurank.kernels import cpu
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tables import config_table


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                           dashboard_address=None)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


def _from_parts(parts):
    meta = parts[0].iloc[:0]
    return dd.from_delayed([delayed(lambda x: x)(p) for p in parts], meta=meta,
                           verify_meta=False)


def _analyze(data, **kw):
    return analyze_dataset(data, return_columns=True, **kw)


def _check(res, ref, out=None):
    got = res.columns
    t = ref.table
    assert np.array_equal(got["row_id"].to_numpy(), np.arange(len(t)))
    for col in ("pareto_rank", "domination_count", "rank"):
        assert np.array_equal(got[col].to_numpy(), t[col].to_numpy()), col
    np.testing.assert_allclose(got["topsis_score"].to_numpy(), t["topsis_score"].to_numpy(),
                               rtol=0, atol=1e-12)
    k = ref.spec.top
    assert np.array_equal(res.score_top_k, cpu.top_k(t["topsis_score"].to_numpy(), k))
    assert np.array_equal(np.sort(res.pareto_front_rows),
                          np.flatnonzero(t["pareto_rank"].to_numpy() == 0))
    assert res.top()["row_id"].tolist() == list(ref.ranking.top(k))
    rk = res.ranking
    for col in ("pareto_rank", "domination_count", "rank"):
        assert np.array_equal(getattr(rk, col), getattr(ref.ranking, col)), col
    assert rk.criteria == tuple(ref.ranking.criteria)
    assert rk.weights == pytest.approx(tuple(ref.ranking.weights), abs=1e-15)
    assert rk.ideal == ref.ranking.ideal and rk.anti_ideal == ref.ranking.anti_ideal
    assert rk.top(3).tolist() == ref.ranking.top(3).tolist()
    # the same call as the in-memory result's, up to the rows the run kept
    assert res.top(2)["row_id"].tolist() == list(ref.ranking.top(2))
    if len(t) > k:
        with pytest.raises(ParamError, match=rf"k must be at most {k}, .* got {k + 1} "):
            res.top(k + 1)
    want = build_summary(ref)
    assert set(res.summary) - {"run_id"} == set(want)
    for key in ("rows", "criteria", "settings", "pareto_front_size", "ideal", "anti_ideal",
                "clusters", "backend"):
        assert res.summary[key] == want[key], key
    gi, wi = res.summary["importance"], want["importance"]
    assert [f["feature"] for f in gi["features"]] == [f["feature"] for f in wi["features"]]
    assert gi["rows_used"] == wi["rows_used"]
    np.testing.assert_allclose([f["permutation"] for f in gi["features"]],
                               [f["permutation"] for f in wi["features"]], atol=1e-9)
    # the attributes of the in-memory result, so that callers do not branch
    assert res.spec == ref.spec and res.backend == ref.backend == "cpu"
    assert res.clusters.k == ref.clusters.k and res.clusters.features == ref.clusters.features
    assert res.clusters.profiles["size"].tolist() == ref.clusters.profiles["size"].tolist()
    assert [f for f in res.importance.table["feature"]] == [
        f for f in ref.importance.table["feature"]]
    assert res.preparation == ref.preparation
    assert len(res.summary["top"]) == len(want["top"])
    for a, b in zip(res.summary["top"], want["top"]):
        assert a.keys() == b.keys()
        assert a["rank"] == b["rank"] and a["pareto_rank"] == b["pareto_rank"]
    if out is not None:
        w = pd.read_parquet(out / "ranking").sort_values("row_id", ignore_index=True)
        assert len(w) == len(t)
        assert np.array_equal(w["cluster"].to_numpy(), t["cluster"].to_numpy())
        assert np.array_equal(w["rank"].to_numpy(), t["rank"].to_numpy())
        assert (out / "ranking" / "_SUCCESS").exists()
        assert (out / "summary.json").exists()
        assert not [p for p in out.iterdir() if p.name.startswith(".")]


SPEC = AnalysisSpec(n_estimators=10, k_range=(2, 3), top=7)


@pytest.mark.parametrize("bucket_rows,sample", [(None, None), (97, 50)])
def test_realistic_table_partitions(client, tmp_path, monkeypatch, bucket_rows, sample):
    # The final rank is a sample sort; small buckets and a small splitter sample put bucket
    # boundaries inside partitions and between equal scores.
    from gpurank.engine.distributed import cross

    if bucket_rows is not None:
        monkeypatch.setattr(cross, "RANK_BUCKET_ROWS", bucket_rows)
        monkeypatch.setattr(cross, "RANK_SAMPLE_ROWS", sample)
    df = config_table(800, seed=3)
    df = pd.concat([df, df.iloc[:100]], ignore_index=True)  # equal scores across partitions
    res = _analyze(dd.from_pandas(df, npartitions=4, sort=False), client=client,
                          spec=SPEC, backend="cpu", out_dir=tmp_path)
    _check(res, Engine(backend="cpu").analyze(df, SPEC), tmp_path)
    assert res.notes[-1].endswith("in 1 bucket") == (bucket_rows is None)
    # Every stage timed, the write and the whole run included.
    assert {"load", "derive", "topsis", "rank", "write", "total"} <= set(res.timings)
    assert res.summary["timings_s"] == res.timings


def test_parquet_folder_minmax_and_two_criteria(client, tmp_path):
    df = config_table(600, seed=4)
    src = tmp_path / "data"
    src.mkdir()
    for i, lo in enumerate(range(0, 600, 200)):
        df.iloc[lo:lo + 200].to_parquet(src / f"part-{i:05d}.parquet", index=False)
    spec = AnalysisSpec(criteria=parse_criteria("time_to_train_min:min:1,cost_usd:min:2"),
                        norm="minmax", n_estimators=10, k_range=(2, 3), clusters=3)
    res = _analyze(src, client=client, spec=spec, backend="cpu")
    _check(res, Engine(backend="cpu").analyze(src, spec))


def test_unlucky_partition_boundaries(client):
    # Integer-valued random criteria: many ties; duplicates split across partitions; one
    # empty partition; one partition holding the whole front.
    rng = np.random.default_rng(11)
    df = config_table(400, seed=5)
    df["a"] = rng.integers(0, 6, len(df)).astype(float)
    df["b"] = rng.integers(0, 6, len(df)).astype(float)
    df["c"] = rng.integers(0, 6, len(df)).astype(float)
    df = pd.concat([df, df.iloc[:60]], ignore_index=True)  # duplicates
    spec = AnalysisSpec(criteria=parse_criteria("a:min,b:min,c:max"), n_estimators=10, k_range=(2, 3), top=15)
    costs = np.column_stack([df.a, df.b, -df.c])
    front = cpu.pareto_front(np.ascontiguousarray(costs))
    order = np.concatenate([np.flatnonzero(front), np.flatnonzero(~front)])
    df = df.iloc[order].reset_index(drop=True)
    nf = int(front.sum())
    parts = [df.iloc[:nf], df.iloc[nf:nf + 30], df.iloc[:0], df.iloc[nf + 30:300],
             df.iloc[300:]]
    parts = [p.reset_index(drop=True) for p in parts]
    res = _analyze(_from_parts(parts), client=client, spec=spec, backend="cpu")
    _check(res, Engine(backend="cpu").analyze(df, spec))
    # Rows equal across partitions: the same counts and ranks.
    got = res.columns
    assert got["domination_count"].iloc[:nf].eq(0).all()


def test_simulated_parquet_default_criteria(client, tmp_path):
    from gpurank.engine.sources.sweep.simulate import simulate_to_parquet

    src = tmp_path / "sim"
    simulate_to_parquet(src, 2000, seed=1, partitioned=True, row_group_rows=600)
    res = _analyze(src, client=client, spec=SPEC, backend="cpu", out_dir=tmp_path / "o")
    _check(res, Engine(backend="cpu").analyze(src, SPEC), tmp_path / "o")


def _faulty(df, parts, fault, index, after, marker):
    """A dataset whose partition ``index`` fails on its ``after``-th read (the write pass
    reads it last): ``fault="kill"`` ends the worker process the first time, ``"raise"``
    raises every time."""
    size = -(-len(df) // parts)
    pieces = [df.iloc[i * size:(i + 1) * size].reset_index(drop=True) for i in range(parts)]

    def read(i, piece):
        if i == index:
            calls = marker.with_suffix(".calls")
            n = int(calls.read_text()) + 1 if calls.exists() else 1
            calls.write_text(str(n))
            if n >= after:
                if fault == "kill" and not marker.exists():
                    marker.write_text("killed")
                    os._exit(1)
                if fault == "raise":
                    raise RuntimeError(f"injected failure while reading partition {i}")
        return piece

    meta = pieces[0].iloc[:0]
    return dd.from_delayed([delayed(read)(i, p) for i, p in enumerate(pieces)], meta=meta,
                           verify_meta=False)


#: Reads of one partition before its last one (scan, prepare, sample, write).
_READS_BEFORE_WRITE = 3


def test_worker_killed_once_recovers(client, tmp_path):
    df = config_table(300, seed=6)
    marker = tmp_path / "killed"
    data = _faulty(df, 3, "kill", 1, _READS_BEFORE_WRITE + 1, marker)
    res = _analyze(data, client=client, spec=SPEC, backend="cpu", out_dir=tmp_path / "o")
    assert marker.exists()  # a worker really died and Dask retried the task elsewhere
    client.wait_for_workers(2, timeout=60)
    _check(res, Engine(backend="cpu").analyze(df, SPEC), tmp_path / "o")


def test_failure_leaves_no_output(client, tmp_path):
    df = config_table(300, seed=6)
    out = tmp_path / "o"
    marker = tmp_path / "m" / "raise"
    marker.parent.mkdir()
    with pytest.raises(Exception, match="injected failure"):
        _analyze(_faulty(df, 3, "raise", 2, _READS_BEFORE_WRITE + 1, marker), client=client,
                 spec=SPEC, backend="cpu", out_dir=out)
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]  # no staging left behind


def test_errors_match_in_memory(client):
    df = config_table(50, seed=1)
    df.loc[3, "time_to_train_min"] = np.nan
    with pytest.raises(GpurankError, match="1 rows are invalid: 1 where time_to_train_min is "
                                           "missing"):
        _analyze(dd.from_pandas(df, npartitions=2, sort=False), client=client,
                        spec=SPEC, backend="cpu")
    spec = AnalysisSpec(n_estimators=10, k_range=(2, 3), drop_invalid=True)
    res = _analyze(dd.from_pandas(df, npartitions=2, sort=False), client=client,
                          spec=spec, backend="cpu")
    _check(res, Engine(backend="cpu").analyze(df, spec))


@pytest.mark.parametrize("bad", ["", " ", "locl", "local:x", "local:0", "local:00", "local:-1",
                                 "local:99999", "tcp://nohost", "tcp://:12", "tls://h:1",
                                 "tcp://h:0", "tcp://h:70000", None, 3])
def test_start_dask_bad_spec(bad):
    with pytest.raises(UsageError, match="^dask must be"):
        start_dask(bad)


def test_distributed_error_is_gpurank_error():
    assert issubclass(DistributedError, GpurankError)


def test_cli_analyze_with_dask_matches_in_memory(tmp_path, capsys):
    import json

    from gpurank.engine.cli import main
    from tables import config_table

    data = tmp_path / "ds"
    data.mkdir()
    df = config_table(120, seed=21)
    for i in range(3):
        df.iloc[i * 40:(i + 1) * 40].to_parquet(data / f"part-{i}.parquet")
    out = tmp_path / "out"
    assert main(["analyze", str(data), "--dask", "local:2", "--backend", "cpu", "--out",
                 str(out), "--json", "--top", "5"]) == 0
    captured = capsys.readouterr()
    dist = json.loads(captured.out)
    # what the exact ranks and counts cost, said on stderr before they start
    assert "exact Pareto ranks and domination counts: 120 rows in 3 partitions" in captured.err
    assert "tasks" in captured.err
    assert main(["analyze", str(data), "--backend", "cpu", "--out", str(tmp_path / "mem"),
                 "--json", "--top", "5", "--no-report"]) == 0
    mem = json.loads(capsys.readouterr().out)
    assert dist["rows"] == mem["rows"] == 120
    assert dist["pareto_front_size"] == mem["pareto_front_size"]
    assert [r["rank"] for r in dist["top"]] == [r["rank"] for r in mem["top"]]
    assert [r["topsis_score"] for r in dist["top"]] == pytest.approx(
        [r["topsis_score"] for r in mem["top"]], abs=1e-12)
    assert (out / "ranking" / "_SUCCESS").exists() and (out / "summary.json").exists()
    assert main(["analyze", str(data), "--dask", "udp://x", "--backend", "cpu"]) == 2


@pytest.mark.parametrize("crit", ["a:min,b:min", "a:min,b:min,c:max,d:min,e:min"])
def test_many_fronts_across_key_blocks(client, monkeypatch, crit):
    # Pareto ranks are computed per key block (rows range-partitioned by a key a dominator
    # never exceeds), not by peeling: many more fronts than partitions or blocks, ties,
    # duplicates; m=5 takes the key-block pairs (k-d tree kernels), m=2 the divide and
    # conquer over key ranges (blocks of 150 rows here).
    from gpurank.engine.distributed import dominance

    monkeypatch.setattr(dominance, "BLOCK_ROWS", 150)
    rng = np.random.default_rng(8)
    df = config_table(700, seed=9)
    base = rng.integers(0, 60, len(df)).astype(float)
    for col in "abcde":
        df[col] = base + rng.integers(0, 3, len(df))
    df["c"] = -df["c"]
    df = pd.concat([df, df.iloc[:40]], ignore_index=True)
    spec = AnalysisSpec(criteria=parse_criteria(crit), n_estimators=10, k_range=(2, 3), top=9)
    res = _analyze(dd.from_pandas(df, npartitions=5, sort=False), client=client,
                          spec=spec, backend="cpu")
    ref = Engine(backend="cpu").analyze(df, spec)
    assert ref.table["pareto_rank"].max() > 30
    _check(res, ref)
    assert "key blocks" in res.notes[-1]


@pytest.mark.parametrize("depth,cap", [(3, None), (None, 4), (1, 1), (6, 25)])
def test_clipped_ranks_and_capped_counts_equal_in_memory(client, depth, cap):
    # --rank-depth / --count-cap take local filters and one merge instead of key blocks; the
    # clipped values must be those of the whole table: ties, duplicates split across
    # partitions, an empty partition, many fronts, and a partition holding the whole front.
    rng = np.random.default_rng(21)
    df = config_table(500, seed=13)
    base = rng.integers(0, 40, len(df)).astype(float)
    for col in "abc":
        df[col] = base + rng.integers(0, 4, len(df))
    df = pd.concat([df, df.iloc[:50]], ignore_index=True)
    costs = np.ascontiguousarray(df[["a", "b", "c"]].to_numpy())
    front = cpu.pareto_front(costs)
    df = pd.concat([df[front], df[~front]], ignore_index=True)
    nf = int(front.sum())
    parts = [df.iloc[:nf], df.iloc[nf:nf + 100], df.iloc[:0], df.iloc[nf + 100:]]
    parts = [p.reset_index(drop=True) for p in parts]
    spec = AnalysisSpec(criteria=parse_criteria("a:min,b:min,c:min"), n_estimators=10,
                        k_range=(2, 3), top=8, rank_depth=depth, count_cap=cap)
    res = _analyze(_from_parts(parts), client=client, spec=spec, backend="cpu")
    ref = Engine(backend="cpu").analyze(df, spec)
    full = Engine(backend="cpu").analyze(df, AnalysisSpec(
        criteria=spec.criteria, n_estimators=10, k_range=(2, 3), top=8))
    assert full.table["pareto_rank"].max() > 10
    want_rank = full.table["pareto_rank"].to_numpy()
    want_count = full.table["domination_count"].to_numpy()
    if depth is not None:
        want_rank = np.minimum(want_rank, depth)
    if cap is not None:
        want_count = np.minimum(want_count, cap)
    assert np.array_equal(ref.table["pareto_rank"].to_numpy(), want_rank)
    assert np.array_equal(ref.table["domination_count"].to_numpy(), want_count)
    _check(res, ref)
    assert ("candidate rows merged" in res.notes[-1]) and (
        ("key block" in res.notes[-1]) == (depth is None or cap is None))
    assert any("--rank-depth" in n for n in res.notes) == (depth is not None)
    assert any("--count-cap" in n for n in res.notes) == (cap is not None)


@pytest.mark.parametrize("norm,cap", [("vector", None), ("log", 2), ("minmax", 50)])
def test_robust_ranking_equals_in_memory(client, norm, cap):
    # SMAA on the candidates gathered from the partitions, normalized by the merged column
    # statistics: the same acceptabilities as in memory (counts capped below k are counted
    # again to k); duplicates split across partitions, an empty partition
    df = config_table(500, seed=17)
    df = pd.concat([df, df.iloc[:40]], ignore_index=True)
    parts = [df.iloc[:150], df.iloc[:0], df.iloc[150:420], df.iloc[420:]]
    spec = AnalysisSpec(criteria=parse_criteria("time_to_train_min:min,cost_usd:min,"
                                                "throughput_per_accelerator:max"),
                        n_estimators=10, k_range=(2, 3), top=6, robust=True, samples=300,
                        norm=norm, count_cap=cap, weight_ranges=(("cost_usd", 0.1, 0.6),))
    res = _analyze(_from_parts([p.reset_index(drop=True) for p in parts]), client=client,
                   spec=spec, backend="cpu")
    ref = Engine(backend="cpu").analyze(df, spec)
    for col in ("p_top1", "p_topk", "expected_rank"):
        np.testing.assert_array_equal(res.columns[col].to_numpy(), ref.table[col].to_numpy(),
                                      err_msg=col)
    got, want = res.summary["robust"], build_summary(ref)["robust"]
    assert got["candidates"] == want["candidates"] > 0
    assert (res.robust.candidates[res.robust.order()[:spec.top]].tolist() ==
            ref.robust.candidates[ref.robust.order()[:spec.top]].tolist())
    assert got == want


def _with_interval(n, seed):
    # a simulated or predicted table: the time to train with its 80% prediction interval
    df = config_table(n, seed=seed)
    t = df["time_to_train_min"]
    return df.assign(time_to_train_min_lo=0.8 * t, time_to_train_min_hi=1.3 * t)


def test_drawn_robust_ranking_refused_before_any_task(client):
    # the robust ranking under model uncertainty draws every predicted row inside its
    # interval; on Dask it is refused in one line that names the interval columns, the
    # criteria they move and what runs instead (docs/robust.md)
    df = _with_interval(90, seed=5)
    spec = AnalysisSpec(criteria=parse_criteria("time_to_train_min:min,cost_usd:min"),
                        n_estimators=5, k_range=(2, 3), robust=True, samples=50)
    before = len(client.futures)
    with pytest.raises(ParamError) as err:
        _analyze(_from_parts([df.iloc[:40], df.iloc[40:]]), client=client, spec=spec,
                 backend="cpu")
    msg = str(err.value)
    assert msg == (
        "robust cannot draw predicted values on dask: the table carries the prediction "
        "interval time_to_train_min_lo / time_to_train_min_hi, which moves the criteria "
        "time_to_train_min, cost_usd; run robust in memory (without dask), or on dask without "
        "robust, or drop time_to_train_min_lo and time_to_train_min_hi to draw the weights "
        "only")
    assert err.value.exit_code == 2 and "\n" not in msg
    assert len(client.futures) == before  # nothing was computed


def test_robust_ranking_with_interval_that_moves_no_criterion(client):
    # an interval that moves none of the criteria draws nothing in memory either: Dask runs
    # the weights-only robust ranking and equals the in-memory one
    df = _with_interval(200, seed=6)
    spec = AnalysisSpec(criteria=parse_criteria("n_accelerators:min,global_batch_size:max,"
                                                "cpu_cores_per_accelerator:max"),
                        n_estimators=5, k_range=(2, 3), top=4, robust=True, samples=200)
    res = _analyze(_from_parts([df.iloc[:70], df.iloc[70:]]), client=client, spec=spec,
                   backend="cpu")
    ref = Engine(backend="cpu").analyze(df, spec)
    for col in ("p_top1", "p_topk", "expected_rank"):
        np.testing.assert_array_equal(res.columns[col].to_numpy(), ref.table[col].to_numpy(),
                                      err_msg=col)
    assert res.summary["robust"] == build_summary(ref)["robust"]


def test_cli_drawn_robust_ranking_refused_on_dask(tmp_path, capsys):
    from gpurank.engine.cli import main

    data = tmp_path / "ds"
    data.mkdir()
    df = _with_interval(60, seed=7)
    df.iloc[:30].to_parquet(data / "part-0.parquet")
    df.iloc[30:].to_parquet(data / "part-1.parquet")
    out = tmp_path / "out"
    code = main(["analyze", str(data), "--dask", "local:1", "--backend", "cpu", "--robust",
                 "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1
    assert err[0].startswith("gpurank: error: --robust cannot draw predicted values on --dask: "
                             "the table carries the prediction interval time_to_train_min_lo "
                             "/ time_to_train_min_hi, which moves the criteria "
                             "time_to_train_min, ")
    assert err[0].endswith("run --robust in memory (without --dask), or on --dask without "
                           "--robust, or drop time_to_train_min_lo and time_to_train_min_hi "
                           "to draw the weights only")
    assert not out.exists()


# -- exact ranks and counts by the key-range divide and conquer -----------------------------


def _tied_table(n, m, seed, levels=6):
    """A configuration table whose first m criteria columns are small integers (many ties,
    many fronts), with duplicated rows."""
    rng = np.random.default_rng(seed)
    df = config_table(n, seed=seed)
    base = rng.integers(0, 3 * levels, len(df)).astype(float)
    for col in "abcdef"[:m]:
        df[col] = base + rng.integers(0, levels, len(df))
    return pd.concat([df, df.iloc[: n // 6]], ignore_index=True)


def _crit(m):
    return parse_criteria(",".join(f"{c}:{'max' if c == 'b' else 'min'}" for c in "abcdef"[:m]))


@pytest.mark.parametrize("m", [2, 3, 4, 5, 6])
def test_exact_ranks_and_counts_across_many_key_ranges(client, monkeypatch, m):
    # Blocks of 60 rows: a dozen key blocks and slabs, every merge level of the tree, slabs
    # grouped into tasks, rows equal across partitions, an empty partition. m = 2..4 take
    # the divide and conquer, m = 5 and 6 the key-block pairs; both equal the oracles.
    from gpurank.engine.distributed import dominance
    from gpurank.kernels import reference as ref

    monkeypatch.setattr(dominance, "BLOCK_ROWS", 60)
    df = _tied_table(600, m, seed=40 + m)
    spec = AnalysisSpec(criteria=_crit(m), n_estimators=10, k_range=(2, 3), top=8)
    parts = [df.iloc[:170], df.iloc[:0], df.iloc[170:480], df.iloc[480:]]
    lines = []
    res = analyze_dataset(_from_parts([p.reset_index(drop=True) for p in parts]),
                          client=client, spec=spec, backend="cpu", return_columns=True,
                          announce=lines.append)
    ref_res = Engine(backend="cpu").analyze(df, spec)
    costs = np.column_stack([-df[c] if c == "b" else df[c] for c in "abcdef"[:m]])
    assert np.array_equal(res.columns["pareto_rank"].to_numpy(), ref.pareto_rank(costs))
    assert np.array_equal(res.columns["domination_count"].to_numpy(),
                          ref.domination_count(costs))
    assert ref_res.table["pareto_rank"].max() > 5
    _check(res, ref_res)
    if m <= 4:
        assert len(lines) == 1 and f"{len(df):,} rows in 4 partitions" in lines[0]
        assert "divide and conquer" in res.notes[-1] and "key blocks" in res.notes[-1]
    else:
        assert lines == [] and "block pairs" in res.notes[-1]


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 260), st.integers(2, 4), st.integers(4, 90), st.integers(1, 6),
       st.lists(st.integers(0, 260), max_size=4), st.integers(0, 2**31 - 1))
def test_divide_and_conquer_equals_the_oracles(client, n, m, block, levels, cuts, seed):
    # The kernel-level driver on arrays: any sizes (n = 0 and 1 too), partitions (empty
    # ones too), ties and duplicates; bit-identical to kernels/reference.py.
    from gpurank.engine.distributed.dominance import exact_dominance
    from gpurank.kernels import reference as ref

    rng = np.random.default_rng(seed)
    x = rng.integers(0, levels, (n, m)).astype(np.float64)
    x = np.concatenate([x, x[: n // 4]])
    parts = np.split(x, sorted(min(c, len(x)) for c in cuts))
    if len(x) == 0:
        return
    # keys of their own: hypothesis repeats arrays, and a content-hashed key released by the
    # previous example can be forgotten under this one's tasks
    futs = client.scatter(parts, hash=False)
    counts, ranks, _ = exact_dominance(client, futs, [len(p) for p in parts], m,
                                       block_rows=block)
    got_c = np.concatenate(client.gather(counts))
    got_r = np.concatenate(client.gather(ranks))
    assert got_c.dtype == np.int64 and got_r.dtype == np.int32
    assert np.array_equal(got_c, ref.domination_count(x))
    assert np.array_equal(got_r, ref.pareto_rank(x))


@pytest.mark.parametrize("depth,cap", [(4, None), (None, 3)])
def test_one_exact_one_clipped(client, monkeypatch, depth, cap):
    # One of the two exact by the divide and conquer, the other by the local filters.
    from gpurank.engine.distributed import dominance

    monkeypatch.setattr(dominance, "BLOCK_ROWS", 80)
    df = _tied_table(500, 3, seed=7)
    spec = AnalysisSpec(criteria=_crit(3), n_estimators=10, k_range=(2, 3), top=8,
                        rank_depth=depth, count_cap=cap)
    res = _analyze(dd.from_pandas(df, npartitions=3, sort=False), client=client, spec=spec,
                   backend="cpu")
    _check(res, Engine(backend="cpu").analyze(df, spec))
    assert "divide and conquer" in res.notes[-1] and "candidate rows merged" in res.notes[-1]


def test_invalid_rows_dropped_before_the_divide_and_conquer(client, monkeypatch):
    # The engine's NaN rule: rows with a missing criterion are left out (--drop-invalid)
    # before ranking, and row ids count the analyzed rows, as in memory.
    from gpurank.engine.distributed import dominance

    monkeypatch.setattr(dominance, "BLOCK_ROWS", 70)
    df = _tied_table(400, 4, seed=8)
    rng = np.random.default_rng(8)
    for col in "abd":
        df.loc[rng.choice(len(df), 12, replace=False), col] = np.nan
    spec = AnalysisSpec(criteria=_crit(4), n_estimators=10, k_range=(2, 3), top=8,
                        drop_invalid=True)
    res = _analyze(dd.from_pandas(df, npartitions=4, sort=False), client=client, spec=spec,
                   backend="cpu")
    ref_res = Engine(backend="cpu").analyze(df, spec)
    assert len(ref_res.table) < len(df)
    _check(res, ref_res)


class _KillOnMerge:
    """A worker plugin (test-side) that ends its worker's process when a merge-step task of
    the divide and conquer starts, once in the whole cluster: the worker that creates the
    marker file (atomically) dies."""

    name = "kill-on-merge"

    def __init__(self, marker):
        self.marker = str(marker)

    def setup(self, worker):
        pass

    def teardown(self, worker):
        pass

    def transition(self, key, start, finish, **kwargs):
        name = key if isinstance(key, str) else str(key)
        if finish == "executing" and name.startswith(("_merge_slabs", "_sweep_slabs")):
            try:
                os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                return
            os._exit(1)


def _kill_once(marker):
    from distributed.diagnostics.plugin import WorkerPlugin

    return type("KillOnce", (_KillOnMerge, WorkerPlugin), {})(marker)


def test_worker_killed_in_a_merge_step_recovers_exactly(tmp_path, monkeypatch):
    # A worker dies while running a merge step; Dask recomputes what it held and the
    # output is still exact.
    from distributed import Client, LocalCluster
    from gpurank.engine.distributed import dominance

    monkeypatch.setattr(dominance, "BLOCK_ROWS", 80)
    df = _tied_table(500, 4, seed=9)
    spec = AnalysisSpec(criteria=_crit(4), n_estimators=10, k_range=(2, 3), top=8)
    marker = tmp_path / "killed"
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                      dashboard_address=None) as cluster, Client(cluster) as c:
        c.register_plugin(_kill_once(marker))
        res = _analyze(dd.from_pandas(df, npartitions=3, sort=False), client=c, spec=spec,
                       backend="cpu", out_dir=tmp_path / "o")
        assert marker.exists()
    _check(res, Engine(backend="cpu").analyze(df, spec), tmp_path / "o")


def test_worker_deaths_beyond_what_dask_allows_fail_cleanly(tmp_path, monkeypatch):
    # A worker dies in a merge step more often than the scheduler allows (here: at all):
    # Dask gives up (KilledWorker), the run fails with DistributedError and writes nothing.
    import dask
    from distributed import Client, LocalCluster
    from gpurank.engine.distributed import dominance

    monkeypatch.setattr(dominance, "BLOCK_ROWS", 80)
    df = _tied_table(300, 4, seed=10)
    spec = AnalysisSpec(criteria=_crit(4), n_estimators=10, k_range=(2, 3), top=8)
    out = tmp_path / "o"
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                         dashboard_address=None) as cluster, Client(cluster) as c:
        c.register_plugin(_kill_once(tmp_path / "m"))
        with pytest.raises(DistributedError, match="died repeatedly"):
            _analyze(dd.from_pandas(df, npartitions=3, sort=False), client=c, spec=spec,
                     backend="cpu", out_dir=out)
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]


def test_the_dask_result_answers_as_the_in_memory_one():
    # callers never branch on the driver: every attribute of the in-memory result but its
    # table (written to ranking/ here), and top()
    from dataclasses import fields

    from gpurank.engine.distributed.driver import DistributedResult
    from gpurank.engine.results import AnalysisResult

    dask_fields = {f.name for f in fields(DistributedResult)}
    for f in fields(AnalysisResult):
        assert f.name in dask_fields or f.name == "table", f.name
    assert callable(DistributedResult.top) and callable(AnalysisResult.top)
