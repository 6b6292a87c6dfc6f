"""Readable terminal output of an analysis: the top configurations, the groups, the drivers.

Every table fits the console's width (rich's width: the terminal's, else ``$COLUMNS``, else
80 columns): numbers are never wrapped, text wraps at spaces, and when the columns still do not
fit, whole columns are left out in a fixed order (:data:`TOP_DROP_ORDER` for the top
configurations) and a line under the table names them. Every text that comes from the data
(cells, notes, names) goes through :func:`~gpurank.engine.formatting.printable` and is printed
as plain text, never as rich markup or emoji codes.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .formatting import column_label, fixed, printable, value
from .methods import DEFAULT_METHOD, SCORE_COLUMNS, summary_method

__all__ = ["print_summary", "make_console", "fit_columns", "TOP_DROP_ORDER"]

#: Columns of the top-configurations table left out, first to last, while the table is wider
#: than the console. Never left out: the rank, the accelerator, its count, the criteria and
#: the method's score. Columns not named here (from a user's table) go after ``utilization``.
TOP_DROP_ORDER = (
    "domination_count",
    "cluster",
    "energy_kwh",
    "utilization",
    None,  # any column not named in this list
    "round",
    "submitter",
    "cpu_cores_per_accelerator",
    "provider",
    "pareto_rank",
    "prediction_basis",
)
_TOP_KEEP = ("rank", "accelerator", "n_accelerators", *SCORE_COLUMNS)
#: Top columns not shown in the console (summary.json and the report have them).
_TOP_HIDDEN = {"n_nodes", "network", "interconnect", "host_cpu", "throughput", "system"}
_PROFILE_COLUMNS = ("cluster", "label", "size", "median_n_accelerators",
                    "median_cpu_cores_per_accelerator", "median_time_to_train_min",
                    "median_throughput_per_accelerator", "median_scaling_efficiency",
                    "median_cost_usd")
_PROFILE_DROP_ORDER = ("median_cpu_cores_per_accelerator", "median_throughput_per_accelerator",
                       "median_cost_usd", "median_scaling_efficiency",
                       "median_time_to_train_min", "median_n_accelerators")
_IMPORTANCE_DROP_ORDER = ("impurity", "permutation_std")
_ROBUST_DROP_ORDER = ("central weights", "provider", "P(first)", "mean rank", "n_accelerators")
_TEXT = {"accelerator", "label", "accelerators", "host_cpu", "interconnect", "network",
         "provider", "feature", "system", "submitter", "round", "prediction_basis",
         "central weights"}


def make_console(*, quiet=False, stderr=False, file=None, width=None, force_terminal=None
                 ) -> Console:
    """A rich console that prints plain text (no markup, emoji codes or highlighting).

    Parameters
    ----------
    quiet : bool, keyword-only
        Print nothing.
    stderr : bool, keyword-only
        Print to standard error instead of standard output.
    file : file-like, optional, keyword-only
        Print there instead.
    width : int, optional, keyword-only
        Columns to fit; by default the terminal's, else ``$COLUMNS``, else 80.
    force_terminal : bool, optional, keyword-only
        Treat ``file`` as a terminal (styles) or not, instead of detecting it.
    """
    return Console(quiet=quiet, stderr=stderr, file=file, width=width,
                   force_terminal=force_terminal, highlight=False, soft_wrap=False,
                   emoji=False, markup=False)


def _cell(col, v) -> str:
    if col in SCORE_COLUMNS:
        return fixed(v, 4)  # the top scores often agree to three digits
    return printable(value(v))


def _header(col) -> str:
    return printable(column_label(col, compact=True))


def _min_width(texts) -> int:
    """The narrowest a column holding ``texts`` can be without breaking a word."""
    return max((cell_len(w) for t in texts for w in t.split()), default=1)


def _max_width(texts) -> int:
    return max((cell_len(line) for t in texts for line in t.splitlines() or [""]), default=1)


def _table_width(widths) -> int:
    # heavy-head box: a border before each column and after the last; one space of padding
    # each side inside the table (pad_edge=False: none at the outer edges)
    n = len(widths)
    return sum(widths) + (n + 1) + max(0, 2 * n - 2)


def _shrink(natural, least, width, first=()):
    """Column widths from ``natural`` towards ``least``, widest first, until the table fits
    ``width``; None when it cannot fit even at ``least``. Columns in ``first`` shrink before
    the others (numeric columns, so that their headers wrap before the text does)."""
    w = dict(natural)
    excess = _table_width(list(w.values())) - width
    pos = {c: i for i, c in enumerate(w)}
    while excess > 0:
        room = [c for c in w if w[c] > least[c]]
        if not room:
            return None
        room = [c for c in room if c in first] or room
        c = max(room, key=lambda x: (w[x], -pos[x]))  # the widest, leftmost first
        w[c] -= 1
        excess -= 1
    return w


def fit_columns(records, columns, width, *, drop_order=(), keep=(), cell=_cell,
                header=_header):
    """The columns of a table that fit ``width`` columns, with their widths, and those left
    out.

    A numeric column is never narrower than its widest value (numbers do not wrap) and a text
    column never narrower than its longest word; headers wrap at spaces. Columns are left out
    in ``drop_order`` (``None`` there stands for every column it does not name) until the
    others fit; ``keep`` columns are never left out, and when they alone are too wide they are
    kept and their text folds.

    Returns
    -------
    (widths, dropped) : (dict of str to int, list of str)
        Content width of each shown column, in order; the columns left out, in the order
        they were.
    """
    cells = {c: [cell(c, r.get(c)) for r in records] for c in columns}
    heads = {c: header(c) for c in columns}
    natural = {c: max(_max_width(cells[c]), _max_width([heads[c]])) for c in columns}
    least = {c: max(_min_width(cells[c]) if c in _TEXT else _max_width(cells[c]),
                    _min_width([heads[c]])) for c in columns}
    named = [c for c in drop_order if c is not None]
    order = []
    for c in drop_order:
        if c is None:
            order += [x for x in columns if x not in named and x not in keep]
        elif c in columns and c not in keep:
            order.append(c)
    shown = list(columns)
    dropped = []
    numeric = {c for c in columns if c not in _TEXT}
    while True:
        widths = _shrink({c: natural[c] for c in shown}, least, width, numeric)
        if widths is not None:
            return widths, dropped
        if not order:
            break
        c = order.pop(0)
        shown.remove(c)
        dropped.append(c)
    # the kept columns alone are too wide: share what there is, and let their text fold
    widths = _shrink({c: natural[c] for c in shown}, {c: 1 for c in shown}, width)
    return widths or {c: 1 for c in shown}, dropped


def _records_table(title, records, columns, console, *, drop_order=(), keep=(),
                   cell=_cell, header=_header):
    """Print ``title`` and the table of ``records`` fitted to the console; returns the
    columns left out."""
    widths, dropped = fit_columns(records, columns, console.width, drop_order=drop_order,
                                  keep=keep, cell=cell, header=header)
    console.print(Text(printable(title)))
    t = Table(show_lines=False, pad_edge=False)
    for c, w in widths.items():
        # headers wrap at spaces; cells of a column too narrow for them fold
        t.add_column(Text(header(c), no_wrap=False), justify="left" if c in _TEXT else "right",
                     width=w, overflow="fold")
    for r in records:
        t.add_row(*[Text(cell(c, r.get(c))) for c in widths])
    console.print(t)
    return dropped


def _left_out(console, dropped, header=_header):
    if dropped:
        names = ", ".join(header(c) for c in dropped)
        console.print(Text(f"(left out to fit {console.width} columns: {names}; every column "
                           "is in summary.json)"))


def print_summary(summary: dict, console: Console) -> None:
    """Print the top-K table, the cluster profiles and the importance table.

    Each table fits ``console.width``. While the top-configurations table is too wide, its
    columns are left out in this order (:data:`TOP_DROP_ORDER`): dominated by, cluster,
    energy, utilization, any column of the user's table not named here, round, submitter,
    cores per accelerator, provider, Pareto front, prediction basis. The rank, accelerator,
    accelerator count, criteria and the method's score are always shown. When the prediction
    basis (``fitted`` or ``borrowed:<family>``) is left out, it is printed on a line of its own
    under the table; a line names the other columns left out.
    """
    crit = ", ".join(f"{c['column']} ({c['sense']}, w={c['weight']:.2f})"
                     for c in summary.get("criteria") or [])
    console.print(Text(printable(f"gpurank: {value(summary.get('rows'))} configurations on "
                                 f"{summary.get('backend', '?')}; criteria: {crit}")))
    console.print(Text(f"Pareto front: {value(summary.get('pareto_front_size'))} "
                       "configurations"))
    top = summary.get("top") or []
    if top:
        cols = [c for c in top[0] if c not in _TOP_HIDDEN]
        keep = _TOP_KEEP + tuple(c["column"] for c in summary.get("criteria") or [])
        method = summary_method(summary)
        by = "" if method.name == DEFAULT_METHOD else f" by {method.label}"
        dropped = _records_table(f"Top {len(top)} configurations{by}", top, cols, console,
                                 drop_order=TOP_DROP_ORDER, keep=keep)
        if "prediction_basis" in dropped:
            basis = ", ".join(f"#{value(r.get('rank'))} "
                              f"{_cell('prediction_basis', r.get('prediction_basis'))}"
                              for r in top)
            console.print(Text(f"prediction basis: {basis}"))
        _left_out(console, [c for c in dropped if c != "prediction_basis"])
    rb = summary.get("robust")
    if rb and rb.get("top"):
        _print_robust(rb, console)
    cl = summary.get("clusters")
    if cl and cl.get("profiles"):
        prof = cl["profiles"]
        cols = [c for c in _PROFILE_COLUMNS if c in prof[0]]
        _left_out(console, _records_table(
            f"{cl['k']} groups, medians per group (KMeans on {', '.join(cl['features'])})",
            prof, cols, console, drop_order=_PROFILE_DROP_ORDER))
    imp = summary.get("importance")
    if imp:
        title = (f"What drives {imp['target']} (random forest, held-out R^2 = "
                 f"{fixed(imp['holdout_r2'], 2)}, {value(imp['rows_used'])} rows"
                 f"{', sampled' if imp['sampled'] else ''})")
        _left_out(console, _records_table(
            title, imp["features"], ["feature", "permutation", "permutation_std", "impurity"],
            console, drop_order=_IMPORTANCE_DROP_ORDER))
    for note in summary.get("notes") or []:
        console.print(Text(f"note: {printable(note)}"))
    for fb in summary.get("fallbacks") or []:
        console.print(Text(f"backend: {printable(fb)}"))
    t = summary.get("timings_s") or {}
    if t:
        console.print(Text(printable("time: " + ", ".join(f"{k} {fixed(v, 2)} s"
                                                          for k, v in t.items()))))


def _print_robust(rb: dict, console: Console) -> None:
    """The configurations in the top k under the largest share of weight samples."""
    k = rb["k"]
    rows = []
    for r in rb["top"]:
        cw = r.get("central_weights")
        rows.append({
            "rank": r.get("rank"),
            "accelerator": r.get("accelerator"),
            "n_accelerators": r.get("n_accelerators"),
            "provider": r.get("provider"),
            f"P(top {k})": f"{fixed(r['p_topk'], 3)} ± {fixed(r['p_topk_se'], 3)}",
            "P(first)": f"{fixed(r['p_top1'], 3)} ± {fixed(r['p_top1_se'], 3)}",
            "mean rank": (f"{fixed(r['expected_rank'], 1)} ± "
                          f"{fixed(r['expected_rank_se'] or 0, 1)}"),
            "central weights": "-" if cw is None else " ".join(fixed(v, 2)
                                                               for v in cw.values()),
        })
    cols = [c for c in rows[0] if any(r.get(c) is not None for r in rows)]

    def header(c):
        return _header(c) if c in ("rank", "accelerator", "n_accelerators", "provider") else c

    title = (f"Robust top {len(rows)} (SMAA, {value(rb['samples'])} weight samples; "
             f"{value(rb['candidates'])} candidates, {value(rb['pruned'])} rows pruned as "
             f"unable to reach the top {k})")
    _left_out(console, _records_table(title, rows, cols, console,
                                      drop_order=_ROBUST_DROP_ORDER,
                                      keep=("rank", "accelerator", f"P(top {k})"),
                                      header=header), header=header)
    mu = rb.get("model_uncertainty")
    if isinstance(mu, dict) and mu.get("drawn") and mu.get("text"):
        console.print(printable(f"note: {mu['text']}"))
