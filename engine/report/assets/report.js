/* gpurank report: the interactive trade-off view and the sortable, filterable ranking table.
 *
 * Everything here reads the data of the page itself (a JSON script element) and writes with
 * textContent only, so a string from the data is never parsed as HTML. Without JavaScript the
 * page keeps its static figures and tables.
 */
(function () {
  "use strict";

  var FRONT = "#D55E00";
  var POINT = "rgba(0, 114, 178, 0.35)";
  var TOP = "#111111";

  function fmt(v) {
    // numbers as the rest of the report writes them: 3 significant digits, thousands
    // separated, "-" when missing
    if (v === null || v === undefined || !isFinite(v)) return "-";
    if (v === 0) return "0";
    var mag = Math.floor(Math.log10(Math.abs(Number(v.toPrecision(3)))));
    if (mag < -5 || mag >= 15) return v.toExponential(2);
    var dec = Math.max(2 - mag, 0);
    return v.toLocaleString("en-US", {minimumFractionDigits: dec, maximumFractionDigits: dec});
  }

  function unitText(c, v) {
    var t = fmt(v);
    return c.unit && t !== "-" ? t + " " + c.unit : t;
  }

  // ---- the 2-D Pareto front of the chosen axes -------------------------------------------
  function front2d(points, sx, sy) {
    // points: [{x, y, i}]; sx, sy: +1 to minimize, -1 to maximize. Returns the staircase.
    var pts = points.map(function (p) { return {a: sx * p.x, b: sy * p.y, p: p}; });
    pts.sort(function (u, v) { return u.a - v.a || u.b - v.b; });
    var kept = [];
    var best = Infinity;
    for (var k = 0; k < pts.length; k++) {
      if (pts[k].b < best) { kept.push(pts[k]); best = pts[k].b; }
    }
    var stair = [];
    for (var j = 0; j < kept.length; j++) {
      if (j > 0) stair.push({x: kept[j].a * sx, y: kept[j - 1].b * sy});
      stair.push({x: kept[j].a * sx, y: kept[j].b * sy, i: kept[j].p.i});
    }
    return stair;
  }

  // ---- the trade-off view ------------------------------------------------------------------
  function explorer(root) {
    var data = JSON.parse(document.getElementById(root.dataset.source).textContent);
    var crit = {};
    data.criteria.forEach(function (c) { crit[c.column] = c; });
    var selX = root.querySelector("[data-axis=x]");
    var selY = root.querySelector("[data-axis=y]");
    var logX = root.querySelector("[data-log=x]");
    var logY = root.querySelector("[data-log=y]");
    var detail = root.querySelector("[data-detail]");
    var canvas = root.querySelector("canvas");

    function positive(col) {
      return data.values[col].every(function (v) { return v === null || v > 0; });
    }

    function describe(i) {
      // the hovered configuration, as text nodes
      while (detail.firstChild) detail.removeChild(detail.firstChild);
      var head = document.createElement("div");
      head.className = "explorer-config";
      var rank = data.rank[i];
      head.textContent = (rank <= data.top ? "#" + rank + " " : "rank " + rank + ": ") +
        data.config[i];
      detail.appendChild(head);
      var parts = data.criteria.map(function (c) {
        return c.label + " " + unitText(c, data.values[c.column][i]);
      });
      parts.push((data.score_label || "TOPSIS") + " " + (data.score[i] === null ? "-" : data.score[i].toFixed(4)));
      parts.push(data.front[i] ? "on the Pareto front" : "Pareto front " + data.pareto[i]);
      var vals = document.createElement("div");
      vals.className = "explorer-values";
      vals.textContent = parts.join(" \u00b7 ");
      detail.appendChild(vals);
      root.dataset.hovered = String(i);
    }

    function datasets(xc, yc) {
      var rest = [], front = [], top = [], all = [];
      var xs = data.values[xc], ys = data.values[yc];
      for (var i = 0; i < data.rank.length; i++) {
        var x = xs[i], y = ys[i];
        if (x === null || y === null) continue;
        if ((selX.dataset.log === "1" && x <= 0) || (selY.dataset.log === "1" && y <= 0)) continue;
        var p = {x: x, y: y, i: i};
        all.push(p);
        if (data.rank[i] <= data.top) top.push(p);
        else if (data.front[i]) front.push(p);
        else rest.push(p);
      }
      var sx = crit[xc].sense === "max" ? -1 : 1, sy = crit[yc].sense === "max" ? -1 : 1;
      return [
        {label: "top " + data.top + " by " + (data.by || "TOPSIS"), data: top, pointRadius: 6,
         pointHoverRadius: 8, pointStyle: "rectRot", backgroundColor: TOP, borderColor: "#fff",
         borderWidth: 1, order: 0},
        {label: "Pareto front over all criteria", data: front, pointRadius: 3.5,
         pointHoverRadius: 6, backgroundColor: FRONT, borderColor: FRONT, order: 1},
        {label: "other configurations", data: rest, pointRadius: 2, pointHoverRadius: 5,
         backgroundColor: POINT, borderColor: POINT, order: 2},
        {label: "Pareto front of these two axes", type: "line", data: front2d(all, sx, sy),
         borderColor: "#555555", borderWidth: 1.2, borderDash: [5, 3], pointRadius: 0,
         pointHoverRadius: 0, pointHitRadius: 0, fill: false, order: 3}
      ];
    }

    var labelTop = {
      // "#1", "#2"... next to the first ten top rows
      id: "gpurankTopLabels",
      afterDatasetsDraw: function (chart) {
        var meta = chart.getDatasetMeta(0), ctx = chart.ctx;
        ctx.save();
        ctx.font = "bold 11px system-ui, sans-serif";
        ctx.fillStyle = TOP;
        meta.data.forEach(function (el, k) {
          var p = chart.data.datasets[0].data[k];
          if (data.rank[p.i] <= 10) ctx.fillText("#" + data.rank[p.i], el.x + 7, el.y - 6);
        });
        ctx.restore();
      }
    };

    function scale(sel, log, col) {
      var c = crit[col];
      return {type: log ? "logarithmic" : "linear",
              title: {display: true, text: c.label + (c.unit ? " (" + c.unit + ")" : "") +
                      (c.sense === "max" ? ", higher is better" : ", lower is better")},
              ticks: {callback: function (v) { return fmt(Number(v)); }, maxTicksLimit: 8}};
    }

    var chart = null;

    function draw() {
      var xc = selX.value, yc = selY.value;
      [[logX, xc, selX], [logY, yc, selY]].forEach(function (t) {
        var ok = positive(t[1]);
        t[0].disabled = !ok;
        if (!ok) t[0].checked = false;
        t[2].dataset.log = t[0].checked ? "1" : "0";
      });
      var cfg = {
        type: "scatter",
        data: {datasets: datasets(xc, yc)},
        options: {
          // parsed (no "parsing: false" or "normalized"): Chart.js would then take the points
          // as sorted by x and the axis range from the first and last ones
          animation: false, responsive: true, maintainAspectRatio: false,
          interaction: {mode: "nearest", intersect: true},
          scales: {x: scale(selX, logX.checked, xc), y: scale(selY, logY.checked, yc)},
          plugins: {
            legend: {position: "bottom", labels: {boxWidth: 10}},
            tooltip: {callbacks: {
              title: function (items) {
                var i = items[0].raw.i;
                return i === undefined ? "" : "#" + data.rank[i];
              },
              label: function (item) {
                var i = item.raw.i;
                if (i === undefined) return "";
                return [data.config[i], crit[xc].label + " " + unitText(crit[xc], item.raw.x),
                        crit[yc].label + " " + unitText(crit[yc], item.raw.y)];
              }
            }}
          },
          onHover: function (event, elements, ch) {
            if (!elements.length) return;
            var el = elements[0];
            var p = ch.data.datasets[el.datasetIndex].data[el.index];
            if (p && p.i !== undefined) describe(p.i);
          }
        },
        plugins: [labelTop]
      };
      if (chart) chart.destroy();
      chart = new Chart(canvas, cfg);
      root.dataset.drawn = String(cfg.data.datasets.reduce(function (n, d) {
        return n + (d.type === "line" ? 0 : d.data.length);
      }, 0));
    }

    [logX, logY].forEach(function (el) { el.addEventListener("change", draw); });
    [[logX, selX], [logY, selY]].forEach(function (t) {
      t[0].checked = crit[t[1].value] && crit[t[1].value].log && positive(t[1].value);
    });
    selX.addEventListener("change", function () {
      logX.checked = crit[selX.value].log && positive(selX.value); draw();
    });
    selY.addEventListener("change", function () {
      logY.checked = crit[selY.value].log && positive(selY.value); draw();
    });
    draw();
  }

  // ---- the sortable, filterable table ------------------------------------------------------
  function sortable(table) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function (r, k) { r.dataset.order = String(k); });
    var heads = table.tHead.rows[0].cells;
    var state = {col: -1, dir: 1};

    function key(row, j) {
      var cell = row.cells[j];
      if (cell.dataset.sort !== undefined && cell.dataset.sort !== "") {
        var v = Number(cell.dataset.sort);
        return isNaN(v) ? null : v;
      }
      return cell.textContent.trim().toLowerCase();
    }

    function sortBy(j) {
      state.dir = state.col === j ? -state.dir : 1;
      state.col = j;
      var sorted = rows.slice().sort(function (a, b) {
        var u = key(a, j), v = key(b, j);
        if (u === null || v === null) {  // missing values last, whatever the direction
          if (u === v) return a.dataset.order - b.dataset.order;
          return u === null ? 1 : -1;
        }
        var c = typeof u === "number" && typeof v === "number" ? u - v :
          String(u).localeCompare(String(v));
        return c * state.dir || a.dataset.order - b.dataset.order;
      });
      sorted.forEach(function (r) { body.appendChild(r); });
      Array.prototype.forEach.call(heads, function (th, k) {
        th.setAttribute("aria-sort", k === j ? (state.dir > 0 ? "ascending" : "descending") : "none");
      });
    }

    Array.prototype.forEach.call(heads, function (th, j) {
      th.tabIndex = 0;
      th.classList.add("sort");
      th.setAttribute("aria-sort", "none");
      th.title = "sort by this column";
      th.addEventListener("click", function () { sortBy(j); });
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(j); }
      });
    });

    var bar = document.createElement("div");
    bar.className = "table-filter";
    var input = document.createElement("input");
    input.type = "search";
    input.placeholder = "filter rows (e.g. H100)";
    input.setAttribute("aria-label", "filter the rows of the table");
    var count = document.createElement("span");
    count.className = "muted";
    bar.appendChild(input);
    bar.appendChild(count);
    var wrap = table.closest(".table-wrap") || table;
    wrap.parentNode.insertBefore(bar, wrap);

    function filter() {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      var shown = 0;
      rows.forEach(function (r) {
        var text = r.textContent.toLowerCase();
        var ok = words.every(function (w) { return text.indexOf(w) >= 0; });
        r.hidden = !ok;
        if (ok) shown++;
      });
      count.textContent = words.length ? shown + " of " + rows.length + " rows" : "";
      table.dataset.shown = String(shown);
    }
    input.addEventListener("input", filter);
    table.dataset.shown = String(rows.length);
  }

  function start() {
    Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), sortable);
    Array.prototype.forEach.call(document.querySelectorAll("[data-explorer]"), function (root) {
      if (typeof Chart === "undefined") return;
      // shown before the chart is made, so it sizes itself to the page now rather than on a
      // later resize; hidden again if it cannot be made
      root.hidden = false;
      try {
        explorer(root);
      } catch (err) {
        root.hidden = true;
        throw err;
      }
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
