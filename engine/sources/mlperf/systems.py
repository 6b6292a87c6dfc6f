"""Parse an MLPerf system description into flat fields, whatever generation wrote it.

Three formats exist (see the data README):

* ``flat``     (v0.6 Google, v0.7+, v4.0): the JSON the MLPerf summarizer reads.
* ``entry``    (v0.5, v0.6 Fujitsu/Alibaba): ``hardware``, ``framework``, ``interconnect`` and a
  ``nodes[]`` list with ``num_nodes``, ``cpu``, ``num_cores`` (per node), ``accelerator``,
  ``num_accelerators``.
* ``mll_text`` (v0.6 NVIDIA ``systems/*.json``): not JSON but MLPerf log lines
  ``key: {"value": ...}``, whose ``entry`` value is a Python-literal dict holding an ``entry``
  description (with ``nodes`` itself a string of a dict).

:func:`parse_system_text` returns ``(fields, problems)`` and never raises on bad content.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from ..facts.regular_files import UnreadableFile, excerpt, read_regular

__all__ = ["parse_system_description", "parse_system_text", "to_int", "COUNT_LIMITS",
           "MAX_DESCRIPTION_BYTES"]

#: A system description larger than this is not read (real ones are a few KB).
MAX_DESCRIPTION_BYTES = 16 << 20
#: Counts a description may state, inclusive. The real descriptions (MLPerf Training v0.5-v4.0)
#: reach 1,024 accelerators per listed node, 1,536 nodes, 8 host processors per node, 256
#: cores per processor and 11,616 accelerators in one system; the limits leave more than ten
#: times that room and still refuse what no real system has. A value outside (negative, zero
#: nodes, beyond the limit) or one that is not an integer is left empty, with a problem naming
#: the field. 0 host processors or cores means "not stated" (v0.5 entries).
COUNT_LIMITS = {
    "accelerators_per_node": (0, 16_384),
    "number_of_nodes": (1, 100_000),
    "host_processors_per_node": (0, 64),
    "host_processor_core_count": (0, 4_096),
}
#: The most accelerators one system may have in total (accelerators per node x nodes).
MAX_TOTAL_ACCELERATORS = 1_000_000
_PLACEHOLDERS = {"", "-", "n/a", "na", "none", "todo", "core_count", "not public", "null", "tbd"}
_LEADING_COUNT = re.compile(r"^\s*(\d+)\s*[xX×]\s*(.+)$")
_TPU_SLICE = re.compile(r"^tpu-?v(\d{1,4})-(\d{1,9})$", re.IGNORECASE)
_MEM_IN_NAME = re.compile(r"(\d+)\s*GB", re.IGNORECASE)


def to_int(v) -> int | None:
    """An integer from a JSON value as submitters write them ("8", 8, "8.0"); None otherwise."""
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v) if v == v and v.is_integer() else None
    if isinstance(v, str):
        s = v.strip()
        if s.lower() in _PLACEHOLDERS:
            return None
        try:
            f = float(s)
        except ValueError:
            return None
        return int(f) if f.is_integer() else None
    return None


def _text(v) -> str:
    if v is None:
        return ""
    if isinstance(v, (list, tuple)):
        # one level of list is a value submitters write; deeper nesting is not, and is not
        # walked (a hostile file could nest it as deep as the parser allows)
        return ", ".join(excerpt(x) if isinstance(x, (list, tuple, dict)) else str(x).strip()
                         for x in v)
    if isinstance(v, dict):
        return excerpt(v)
    return str(v).strip()


def _count(f: dict, field: str, raw) -> int | None:
    """A count from the description, checked against ``COUNT_LIMITS``; a bad one is left
    empty and recorded in ``f["desc_problems"]``."""
    if raw is None or (isinstance(raw, str) and raw.strip().lower() in _PLACEHOLDERS):
        return None
    v = to_int(raw)
    lo, hi = COUNT_LIMITS[field]
    if v is None:
        f["desc_problems"].append(f"{field} = {excerpt(raw)} is not an integer; left empty")
        return None
    if not lo <= v <= hi:
        what = "negative" if v < 0 else ("zero" if v == 0 else "beyond any real system")
        f["desc_problems"].append(
            f"{field} = {excerpt(raw)} is {what} (allowed: {lo:,} to {hi:,}); left empty")
        return None
    return v


def _first(d: dict, *keys) -> object:
    for k in keys:
        if k in d and d[k] not in (None, ""):
            return d[k]
    return None


def _norm_division(v) -> str:
    s = _text(v).lower()
    return "closed" if s == "close" else s


def _empty_fields() -> dict:
    return {
        "desc_format": "",
        "division": "",
        "availability": "",
        "submitter_desc": "",
        "system_name": "",
        "accelerator_raw": "",
        "accelerators_per_node": None,
        "number_of_nodes": None,
        "host_cpu": "",
        "host_processors_per_node": None,
        "host_processor_core_count": None,
        "host_cores_per_node": None,
        "interconnect": "",
        "network": "",
        "framework": "",
        "accelerator_memory": "",
        "sw_notes": "",  # the description's software and hardware notes, joined
        "desc_notes": [],
        "desc_problems": [],
    }


def _from_flat(d: dict) -> dict:
    f = _empty_fields()
    f["desc_format"] = "flat"
    f["division"] = _norm_division(_first(d, "division", "divison"))
    f["availability"] = _text(d.get("status"))
    f["submitter_desc"] = _text(d.get("submitter"))
    f["system_name"] = _text(d.get("system_name"))
    f["accelerator_raw"] = _text(d.get("accelerator_model_name"))
    f["accelerators_per_node"] = _count(f, "accelerators_per_node", d.get("accelerators_per_node"))
    f["number_of_nodes"] = _count(f, "number_of_nodes",
                                  _first(d, "number_of_nodes", "number of nodes"))
    f["host_cpu"] = _text(d.get("host_processor_model_name"))
    procs = _count(f, "host_processors_per_node", d.get("host_processors_per_node")) or None
    cores = _count(f, "host_processor_core_count", d.get("host_processor_core_count")) or None
    f["host_processors_per_node"] = procs
    f["host_processor_core_count"] = cores
    if procs is not None and cores is not None:
        f["host_cores_per_node"] = procs * cores
    f["interconnect"] = _text(d.get("accelerator_interconnect"))
    f["network"] = _text(d.get("host_networking"))
    # v4.0 adds framework_name beside (or instead of) framework
    f["framework"] = _text(_first(d, "framework", "framework_name"))
    f["accelerator_memory"] = _text(d.get("accelerator_memory_capacity"))
    f["sw_notes"] = " ".join(x for x in (_text(d.get("sw_notes")), _text(d.get("hw_notes"))) if x)
    if "divison" in d and "division" not in d:
        f["desc_notes"].append("key 'divison' used for division")
    if "number of nodes" in d and "number_of_nodes" not in d:
        f["desc_notes"].append("key 'number of nodes' used for number_of_nodes")
    return f


def _from_entry(d: dict, fmt: str = "entry") -> dict:
    f = _empty_fields()
    f["desc_format"] = fmt
    f["division"] = _norm_division(_first(d, "division", "divison"))
    f["availability"] = _text(d.get("status"))
    f["system_name"] = _text(_first(d, "hardware", "platform"))
    f["framework"] = _text(d.get("framework"))
    f["network"] = _text(d.get("interconnect"))
    nodes = d.get("nodes")
    if isinstance(nodes, str):
        nodes = _literal(nodes)
    if isinstance(nodes, dict):
        nodes = [nodes]
    if not isinstance(nodes, list) or not nodes or not isinstance(nodes[0], dict):
        f["desc_notes"].append("no usable 'nodes' list")
        return f
    node = next((n for n in nodes if isinstance(n, dict) and (to_int(n.get("num_accelerators")) or 0) > 0), nodes[0])
    accel = _text(node.get("accelerator"))
    f["accelerator_raw"] = accel
    n_acc = _count(f, "accelerators_per_node", node.get("num_accelerators"))
    n_nodes = _count(f, "number_of_nodes", node.get("num_nodes"))
    cpu = _text(node.get("cpu"))
    procs = None
    m = _LEADING_COUNT.match(cpu)
    if m:
        procs = _count(f, "host_processors_per_node", m.group(1)) or None
        cpu = m.group(2).strip()
    f["host_cpu"] = cpu
    cores_node = _count(f, "host_processor_core_count", node.get("num_cores")) or None
    f["host_processors_per_node"] = procs
    f["host_cores_per_node"] = cores_node
    if cores_node is not None:
        f["host_processor_core_count"] = cores_node // procs if procs else cores_node
    tpu = _TPU_SLICE.match(accel)
    if tpu and int(tpu.group(2)) // 2 > COUNT_LIMITS["accelerators_per_node"][1]:
        f["desc_problems"].append(
            f"TPU slice {excerpt(accel)} is beyond any real system; counts left empty")
        n_acc = n_nodes = None
    elif tpu:
        # v0.5 listed a TPU slice as cores on several host VMs; count chips (2 cores/chip) on
        # one node, as v0.6+ Google entries do
        chips = int(tpu.group(2)) // 2
        f["desc_notes"].append(
            f"TPU slice {accel} listed as {n_acc} x {n_nodes} nodes; mapped to {chips} chips on 1 node"
        )
        n_acc, n_nodes = chips, 1
    f["accelerators_per_node"] = n_acc
    f["number_of_nodes"] = n_nodes
    mem = _MEM_IN_NAME.search(accel)
    f["accelerator_memory"] = f"{mem.group(1)} GB" if mem else ""
    return f


def _from_mll_text(text: str) -> dict | None:
    values: dict = {}
    for line in text.splitlines():
        if ":" not in line:
            continue
        key, _, rest = line.partition(":")
        key = key.strip()
        if key.startswith(":::MLL"):
            key = key.split()[-1]
        key = key.removeprefix("submission_")
        try:
            rec = json.loads(rest.strip())
        except (ValueError, RecursionError):
            continue
        if isinstance(rec, dict) and "value" in rec:
            values[key] = rec["value"]
    entry = values.get("entry")
    if isinstance(entry, str):
        entry = _literal(entry)
    if not isinstance(entry, dict):
        return None
    merged = dict(entry)
    merged.setdefault("division", values.get("division"))
    merged.setdefault("status", values.get("status"))
    f = _from_entry(merged, fmt="mll_text")
    if values.get("platform"):
        f["system_name"] = _text(values["platform"])
    f["submitter_desc"] = _text(values.get("org"))
    return f


def _literal(text: str):
    """A Python literal (v0.6 NVIDIA entries) or None; never raises, whatever the text."""
    if len(text) > MAX_DESCRIPTION_BYTES:
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
        return None


def _check_total(f: dict) -> dict:
    apn, nodes = f.get("accelerators_per_node"), f.get("number_of_nodes")
    if apn is not None and nodes is not None and apn * nodes > MAX_TOTAL_ACCELERATORS:
        f["desc_problems"].append(
            f"accelerators_per_node x number_of_nodes = {apn * nodes:,} accelerators is beyond "
            f"any real system (at most {MAX_TOTAL_ACCELERATORS:,}); counts left empty")
        f["accelerators_per_node"] = f["number_of_nodes"] = None
    return f


def parse_system_text(text: str) -> tuple[dict | None, str]:
    """Fields from the text of a description; ``(None, reason)`` when it cannot be read.

    Counts outside ``COUNT_LIMITS`` (negative, zero nodes, beyond any real system) and
    values that are not integers are left empty, each with a line in
    ``fields["desc_problems"]`` naming the field and an escaped excerpt of the value.
    """
    f, why = _parse_system_text(text)
    return (_check_total(f), why) if f is not None else (f, why)


def _parse_system_text(text: str) -> tuple[dict | None, str]:
    stripped = text.lstrip("\ufeff").strip()
    if not stripped:
        return None, "empty system description"
    if stripped[0] in "{[":
        try:
            d = json.loads(stripped)
        except RecursionError:
            return None, "JSON nested too deeply to parse"
        except ValueError as exc:
            msg = getattr(exc, "msg", None)
            where = f" at line {exc.lineno}" if getattr(exc, "lineno", None) else ""
            return None, f"malformed JSON ({msg or excerpt(str(exc))}{where})"
        if not isinstance(d, dict):
            return None, "system description is not a JSON object"
        if "nodes" in d and "accelerator_model_name" not in d:
            return _from_entry(d), ""
        return _from_flat(d), ""
    f = _from_mll_text(stripped)
    if f is None:
        return None, "neither JSON nor MLPerf log lines with an 'entry' value"
    return f, ""


def parse_system_description(path: str | Path) -> tuple[dict | None, str]:
    """Fields of one description file; ``(None, reason)`` when it is not a regular file, is
    larger than ``MAX_DESCRIPTION_BYTES`` or cannot be parsed (see :func:`parse_system_text`)."""
    try:
        data = read_regular(Path(path), limit=MAX_DESCRIPTION_BYTES)
    except UnreadableFile as exc:
        return None, f"the file {exc}"
    return parse_system_text(data.decode("utf-8", errors="replace"))
