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

__all__ = ["parse_system_description", "parse_system_text", "to_int"]

_PLACEHOLDERS = {"", "-", "n/a", "na", "none", "todo", "core_count", "not public", "null", "tbd"}
_LEADING_COUNT = re.compile(r"^\s*(\d+)\s*[xX×]\s*(.+)$")
_TPU_SLICE = re.compile(r"^tpu-?v(\d+)-(\d+)$", re.IGNORECASE)
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
        return ", ".join(_text(x) for x in v)
    return str(v).strip()


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
        "desc_notes": [],
    }


def _from_flat(d: dict) -> dict:
    f = _empty_fields()
    f["desc_format"] = "flat"
    f["division"] = _norm_division(_first(d, "division", "divison"))
    f["availability"] = _text(d.get("status"))
    f["submitter_desc"] = _text(d.get("submitter"))
    f["system_name"] = _text(d.get("system_name"))
    f["accelerator_raw"] = _text(d.get("accelerator_model_name"))
    f["accelerators_per_node"] = to_int(d.get("accelerators_per_node"))
    f["number_of_nodes"] = to_int(_first(d, "number_of_nodes", "number of nodes"))
    f["host_cpu"] = _text(d.get("host_processor_model_name"))
    procs = to_int(d.get("host_processors_per_node"))
    cores = to_int(d.get("host_processor_core_count"))
    f["host_processors_per_node"] = procs
    f["host_processor_core_count"] = cores
    if procs is not None and cores is not None:
        f["host_cores_per_node"] = procs * cores
    f["interconnect"] = _text(d.get("accelerator_interconnect"))
    f["network"] = _text(d.get("host_networking"))
    # v4.0 adds framework_name beside (or instead of) framework
    f["framework"] = _text(_first(d, "framework", "framework_name"))
    f["accelerator_memory"] = _text(d.get("accelerator_memory_capacity"))
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
        try:
            nodes = ast.literal_eval(nodes)
        except (ValueError, SyntaxError):
            nodes = None
    if isinstance(nodes, dict):
        nodes = [nodes]
    if not isinstance(nodes, list) or not nodes or not isinstance(nodes[0], dict):
        f["desc_notes"].append("no usable 'nodes' list")
        return f
    node = next((n for n in nodes if isinstance(n, dict) and (to_int(n.get("num_accelerators")) or 0) > 0), nodes[0])
    accel = _text(node.get("accelerator"))
    f["accelerator_raw"] = accel
    n_acc = to_int(node.get("num_accelerators"))
    n_nodes = to_int(node.get("num_nodes"))
    cpu = _text(node.get("cpu"))
    procs = None
    m = _LEADING_COUNT.match(cpu)
    if m:
        procs = int(m.group(1))
        cpu = m.group(2).strip()
    f["host_cpu"] = cpu
    cores_node = to_int(node.get("num_cores"))
    if cores_node == 0:
        cores_node = None
    f["host_processors_per_node"] = procs
    f["host_cores_per_node"] = cores_node
    if cores_node is not None:
        f["host_processor_core_count"] = cores_node // procs if procs else cores_node
    tpu = _TPU_SLICE.match(accel)
    if tpu:
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
        except ValueError:
            continue
        if isinstance(rec, dict) and "value" in rec:
            values[key] = rec["value"]
    entry = values.get("entry")
    if isinstance(entry, str):
        try:
            entry = ast.literal_eval(entry)
        except (ValueError, SyntaxError):
            entry = None
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


def parse_system_text(text: str) -> tuple[dict | None, str]:
    """Fields from the text of a description; ``(None, reason)`` when it cannot be read."""
    stripped = text.lstrip("\ufeff").strip()
    if not stripped:
        return None, "empty system description"
    if stripped[0] in "{[":
        try:
            d = json.loads(stripped)
        except ValueError as exc:
            return None, f"malformed JSON ({exc.msg} at line {exc.lineno})"
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
    p = Path(path)
    try:
        text = p.read_bytes().decode("utf-8", errors="replace")
    except OSError as exc:
        return None, f"cannot read file ({exc.strerror or exc})"
    return parse_system_text(text)
