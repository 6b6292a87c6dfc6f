"""The report's small HTML pieces: escaping, tables, figures, the line that describes a
configuration. Every string from the data goes through :func:`esc` (or, inside a script's
JSON, :func:`json_for_script`)."""

from __future__ import annotations

import html
import json
import math

import numpy as np
import pandas as pd

from ..formatting import column_label, value
from . import plots

__all__ = ["esc", "html_table", "kv_table", "missing_note", "png_figure", "numbers",
           "json_for_script", "configuration_text", "is_missing", "TEXT_COLUMNS"]

#: Columns shown as text (left-aligned, sorted as text) in every table.
TEXT_COLUMNS = {"configuration", "accelerator", "label", "accelerators", "host_cpu",
                "interconnect", "network",
                "provider", "feature", "system", "submitter", "round", "framework",
                "n_accelerators_range", "prediction_basis"}

def esc(v) -> str:
    """``v`` as text escaped for HTML (quotes included)."""
    return html.escape(str(v), quote=True)


def _sort_key(v) -> str:
    """A ``data-sort`` value: the number itself, so the table sorts numerically."""
    if isinstance(v, (bool, np.bool_)):
        return str(int(v))
    try:
        f = float(v)
    except (TypeError, ValueError):
        return ""
    return repr(f) if math.isfinite(f) else ""


def html_table(records, columns, *, headers=None, row_class=None, cell=None, table_class=None,
           table_id=None) -> str:
    """An escaped HTML table of ``records`` (dicts); ``cell(col, value, record)`` may return
    raw HTML for a cell (already escaped by the caller). Numeric cells carry their value in
    ``data-sort``."""
    heads = headers or [esc(column_label(c)) for c in columns]
    attrs = (f' class="{table_class}"' if table_class else "") + (
        f' id="{table_id}"' if table_id else "")
    out = [f'<div class="table-wrap"><table{attrs}>', "<thead><tr>"]
    out += [f"<th>{h}</th>" for h in heads]
    out.append("</tr></thead><tbody>")
    for r in records:
        cls = row_class(r) if row_class else ""
        out.append(f'<tr class="{cls}">' if cls else "<tr>")
        for c in columns:
            v = r.get(c)
            raw = cell(c, v, r) if cell else None
            text = c in TEXT_COLUMNS or isinstance(v, str)
            kind = "txt" if text else "num"
            kind = {"configuration": "txt config"}.get(c, kind)
            key = "" if text else f' data-sort="{_sort_key(v)}"'
            out.append(f'<td class="{kind}"{key}>'
                       f'{raw if raw is not None else esc(value(v))}</td>')
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def kv_table(pairs) -> str:
    """A two-column HTML table of ``(name, value)`` pairs, each value formatted by
    :func:`gpurank.engine.formatting.value`."""
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{esc(value(v))}</td></tr>" for k, v in pairs)
    return f'<div class="table-wrap"><table class="kv"><tbody>{rows}</tbody></table></div>'


def missing_note(text) -> str:
    """A paragraph saying what is missing from the report and why."""
    return f'<p class="missing">{esc(text)}</p>'


def png_figure(name, fig, alt, caption) -> str:
    """A matplotlib figure as an HTML ``<figure>`` with the PNG inline (a data URI),
    its ``alt`` text and its ``caption`` (HTML, not escaped)."""
    with plots.figure_rc():
        uri, w, h = plots.to_png_data_uri(fig)
    return (f'<figure data-figure="{esc(name)}"><img src="{uri}" width="{w}" height="{h}" '
            f'alt="{esc(alt)}">'
            f"<figcaption>{caption}</figcaption></figure>")


def numbers(table, col):
    """Column ``col`` of ``table`` as float64, NaN where a value is not a number."""
    return pd.to_numeric(table[col], errors="coerce").to_numpy(dtype=float)


def json_for_script(obj) -> str:
    """JSON safe inside a ``<script type="application/json">`` element: no ``</script>``,
    no ``<!--``, no raw non-ASCII (U+2028 and U+2029 included)."""
    text = json.dumps(obj, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def configuration_text(r) -> str:
    """One line describing a configuration's setup, e.g. '8 x H100 on 1 node; EPYC, 8 cores
    per accelerator; NVLink; InfiniBand'; a table's own ``configuration`` text when it has
    one."""
    own = r.get("configuration")
    if own is not None and str(own) != "" and not is_missing(own):
        return str(own)
    parts = []
    acc = r.get("accelerator")
    n = r.get("n_accelerators")
    acc = None if is_missing(acc) else acc
    n = None if is_missing(n) else n
    first = f"{value(n)} x {acc}" if n is not None and acc is not None else value(acc or n)
    nodes = r.get("n_nodes")
    if nodes is not None and not is_missing(nodes):
        first += f" on {value(nodes)} node{'s' if nodes != 1 else ''}"
    parts.append(first)
    cpu = r.get("host_cpu")
    cores = r.get("cpu_cores_per_accelerator")
    cpu = None if is_missing(cpu) else cpu
    cores = None if is_missing(cores) else cores
    if cpu is not None or cores is not None:
        parts.append(", ".join(x for x in (
            str(cpu) if cpu is not None else None,
            f"{value(cores)} cores/accel" if cores is not None else None) if x))
    for c in ("interconnect", "network", "provider"):
        v = r.get(c)
        if v is not None and not is_missing(v) and str(v) not in ("", "none"):
            parts.append(str(v))
    who = " ".join(str(r[c]) for c in ("round", "submitter", "system")
                   if r.get(c) is not None and not is_missing(r[c]))
    if who:
        parts.insert(0, who + ":")
    return "; ".join(parts).replace(":;", ":")


def is_missing(v) -> bool:
    """Whether a cell is missing: None, ``pandas.NA``, ``NaT`` or a float NaN."""
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    return isinstance(v, float) and math.isnan(v)
