// Part 3 of the page script (leaderboard/page/render.py PAGE_SCRIPTS): radar, declared metric series, declared
// report sections, as LCCharts.
var LCCharts = (function (P) {
  "use strict";
  var el = P.el, svg = P.svg, clear = P.clear, byId = P.byId, fmt = P.fmt, own = P.own, get = P.get, reports = P.reports,
      state = P.state, metricInfo = P.metricInfo, byOrder = P.byOrder, boardRows = P.boardRows,
      colorOf = P.colorOf;

  // ---------------------------------------------------------------- radar
  function radarValues(row) {
    // metric -> {score, source}; per metric the entry (task or group) with the most instances
    var out = new Map();
    Object.keys(row.tasks).forEach(function (name) {
      var entry = row.tasks[name];
      Object.keys(entry.metrics).forEach(function (m) {
        if (!metricInfo(m).radar) return;
        var value = entry.metrics[m];
        var weight = value.n + (entry.kind === "group" ? 0.5 : 0);
        if (!out.has(m) || out.get(m).weight < weight) out.set(m, { score: value.score, source: name, weight: weight, ci95: value.ci95 });
      });
    });
    return out;
  }

  function renderRadars() {
    var box = byId("radars");
    clear(box);
    var rows = boardRows();
    var axes = new Map();
    var values = rows.map(function (row) { var v = radarValues(row); v.forEach(function (_, m) { axes.set(m, true); }); return v; });
    var names = Array.from(axes.keys()).sort(byOrder);
    if (names.length < 3) {
      box.appendChild(el("p", { class: "note", text: "A radar needs at least three consistency metrics; this board has " + names.length + "." }));
      return;
    }
    var size = 320, cx = size / 2, cy = 138, radius = 84;
    function point(i, frac) {
      var angle = -Math.PI / 2 + 2 * Math.PI * i / names.length;
      return [cx + radius * frac * Math.cos(angle), cy + radius * frac * Math.sin(angle)];
    }
    rows.forEach(function (row, r) {
      var color = colorOf(row.row_id);
      var chart = svg("svg", { width: size, height: 276, viewBox: "0 0 " + size + " 276", role: "img" },
        svg("title", { text: "Consistency profile of " + row.model.name }));
      [0.25, 0.5, 0.75, 1].forEach(function (frac) {
        var pts = names.map(function (_, i) { return point(i, frac).join(","); }).join(" ");
        chart.appendChild(svg("polygon", { points: pts, fill: frac === 1 ? "#f6f8fa" : "none", stroke: "#d1d9e0", "stroke-width": 1 }));
      });
      names.forEach(function (m, i) {
        var end = point(i, 1), label = point(i, 1.2);
        chart.appendChild(svg("line", { x1: cx, y1: cy, x2: end[0], y2: end[1], stroke: "#d1d9e0" }));
        var cos = Math.cos(-Math.PI / 2 + 2 * Math.PI * i / names.length);
        var anchor = Math.abs(cos) < 0.3 ? "middle" : (cos > 0 ? "start" : "end");
        var value = values[r].has(m) ? values[r].get(m) : null;
        var sin = Math.sin(-Math.PI / 2 + 2 * Math.PI * i / names.length);
        var top = label[1] + (sin < -0.5 ? -6 : sin > 0.5 ? 8 : 0);
        chart.appendChild(svg("text", { x: label[0], y: top, "text-anchor": anchor, "font-size": 11, fill: "#1f2328" },
          metricInfo(m).label,
          svg("tspan", { x: label[0], dy: 13, fill: "#59636e", text: value ? fmt(value.score, 2) : "n/a" }),
          svg("title", { text: metricInfo(m).description + (value ? " — from " + value.source : " — not measured") })));
      });
      var pts = names.map(function (m, i) {
        var value = values[r].has(m) ? values[r].get(m) : null;
        var range = metricInfo(m).range;
        var frac = value ? Math.max(0, Math.min(1, (value.score - range[0]) / (range[1] - range[0]))) : 0;
        return point(i, frac);
      });
      var polygon = svg("polygon", { points: pts.map(function (p) { return p.join(","); }).join(" "), stroke: color, "stroke-width": 2, fill: color });
      polygon.setAttribute("fill-opacity", "0.22");
      chart.appendChild(polygon);
      pts.forEach(function (p, i) {
        var value = values[r].has(names[i]) ? values[r].get(names[i]) : null;
        chart.appendChild(svg("circle", { cx: p[0], cy: p[1], r: 3, fill: value ? color : "#fff", stroke: color },
          svg("title", { text: metricInfo(names[i]).label + ": " + (value ? fmt(value.score, 4) + " (" + value.source + ")" : "not measured") })));
      });
      var card = el("div", { class: "radar-card" });
      var heading = el("h3", null, el("span", { class: "swatch" }), row.model.name);
      heading.firstChild.style.background = color;
      card.appendChild(heading);
      card.appendChild(chart);
      box.appendChild(card);
    });
  }

  // ---------------------------------------------------------------- a declared metric series against its parameter
  function stranMetrics(entry) {
    return Object.keys(entry.metrics).filter(function (m) { return typeof metricInfo(m).series_value === "number"; });
  }

  function renderStran() {
    var box = byId("stran"), note = byId("stran-note");
    clear(box);
    var rows = boardRows();
    var source = null;
    if (rows.some(function (row) { var e = get(row.tasks, state.view); return e && stranMetrics(e).length; })) source = state.view;
    else {
      var best = -1;
      rows.forEach(function (row) {
        Object.keys(row.tasks).forEach(function (name) {
          var e = row.tasks[name], n = stranMetrics(e).length ? e.n_instances + (e.kind === "group" ? 1e9 : 0) : -1;
          if (n > best) { best = n; source = name; }
        });
      });
      if (best < 0) source = null;
    }
    if (source === null) { note.textContent = "No metric series on this board."; return; }
    var first = metricInfo(stranMetrics(rows.map(function (row) { return get(row.tasks, source); }).filter(Boolean)
      .filter(function (e) { return stranMetrics(e).length; })[0])[0]);
    var seriesTitle = first.series_title, seriesName = first.series;
    byId("stran-title").textContent = seriesTitle + " against " + seriesName;
    note.textContent = "From " + source + (source === state.view ? "" : " (the selected view has no " + seriesTitle + " metric)") +
      ". Points are lm-eval's scores, bars their 95% bootstrap intervals.";
    var ks = new Map();  // series parameter K -> metric name
    rows.forEach(function (row) { var e = get(row.tasks, source); if (e) stranMetrics(e).forEach(function (m) { ks.set(metricInfo(m).series_value, m); }); });
    var kList = Array.from(ks.keys()).sort(function (a, b) { return a - b; });
    var W = 560, H = 300, L = 52, R = 20, T = 16, B = 44;
    var chart = svg("svg", { width: "100%", viewBox: "0 0 " + W + " " + H, role: "img" },
      svg("title", { text: seriesTitle + " against " + seriesName }));
    function x(k) {
      if (kList.length === 1) return L + (W - L - R) / 2;
      return L + 20 + (W - L - R - 40) * (k - kList[0]) / (kList[kList.length - 1] - kList[0]);
    }
    function y(v) { return T + (H - T - B) * (1 - Math.max(0, Math.min(1, v))); }
    [0, 0.25, 0.5, 0.75, 1].forEach(function (v) {
      chart.appendChild(svg("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: v === 0 ? "#8c959f" : "#eaeef2" }));
      chart.appendChild(svg("text", { x: L - 8, y: y(v) + 4, "text-anchor": "end", "font-size": 11, fill: "#59636e", text: v.toFixed(2) }));
    });
    kList.forEach(function (k) {
      chart.appendChild(svg("text", { x: x(k), y: H - B + 18, "text-anchor": "middle", "font-size": 12, fill: "#1f2328", text: String(k) }));
    });
    chart.appendChild(svg("text", { x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle", "font-size": 12, fill: "#59636e", text: first.series_axis }));
    chart.appendChild(svg("text", { x: 14, y: (T + H - B) / 2, "text-anchor": "middle", "font-size": 12, fill: "#59636e",
      transform: "rotate(-90 14 " + (T + H - B) / 2 + ")", text: seriesTitle }));
    var legend = el("div", { class: "legend" });
    rows.forEach(function (row, r) {
      var e = get(row.tasks, source);
      if (!e) return;
      var color = colorOf(row.row_id), offset = (r - (rows.length - 1) / 2) * 5;
      var points = kList.filter(function (k) { return own(e.metrics, ks.get(k)); }).map(function (k) {
        return { k: k, v: e.metrics[ks.get(k)] };
      });
      if (points.length > 1) {
        chart.appendChild(svg("polyline", { points: points.map(function (p) { return (x(p.k) + offset) + "," + y(p.v.score); }).join(" "),
          fill: "none", stroke: color, "stroke-width": 2 }));
      }
      points.forEach(function (p) {
        var px = x(p.k) + offset;
        if (p.v.ci95) {
          chart.appendChild(svg("line", { x1: px, x2: px, y1: y(p.v.ci95[0]), y2: y(p.v.ci95[1]), stroke: color, "stroke-width": 1.5 }));
          [p.v.ci95[0], p.v.ci95[1]].forEach(function (v) {
            chart.appendChild(svg("line", { x1: px - 4, x2: px + 4, y1: y(v), y2: y(v), stroke: color, "stroke-width": 1.5 }));
          });
        }
        chart.appendChild(svg("circle", { cx: px, cy: y(p.v.score), r: 4, fill: color, stroke: "#fff", "stroke-width": 1 },
          svg("title", { text: row.model.name + ": " + metricInfo(ks.get(p.k)).label + " = " + fmt(p.v.score, 4) +
            (p.v.ci95 ? " [" + fmt(p.v.ci95[0], 4) + ", " + fmt(p.v.ci95[1], 4) + "]" : "") + ", n = " + p.v.n })));
      });
      var item = el("span", null, el("span", { class: "swatch" }), row.model.name);
      item.firstChild.style.background = color;
      legend.appendChild(item);
    });
    box.appendChild(chart);
    box.appendChild(legend);
  }

  // ---------------------------------------------------------------- report sections the families declared
  // One card per report a family declared (tasks/reports.py ReportHook): the page knows chart kinds, not reports.
  var REPORT_CHARTS = new Map([["count_matrix", drawCountMatrix]]);

  function buildReportSections() {
    var box = byId("charts");
    reports.forEach(function (report) {
      var view = {
        model: el("select"), task: el("select"), chart: el("div", { class: "report-chart" }), rowId: null, taskName: null
      };
      state.reports.set(report.section, view);
      box.appendChild(el("section", { class: "card" }, el("h2", { text: report.title }),
        el("div", { class: "controls" }, el("label", null, "Model ", view.model), el("label", null, "Task ", view.task)), view.chart));
      view.model.addEventListener("change", function (event) { view.rowId = event.target.value; renderReport(report); });
      view.task.addEventListener("change", function (event) { view.taskName = event.target.value; renderReport(report); });
    });
  }

  function renderReportControls(report, view) {
    var rows = boardRows().filter(function (row) { return Object.keys(get(row, report.section) || {}).length > 0; });
    clear(view.model); clear(view.task);
    rows.forEach(function (row) { view.model.appendChild(el("option", { value: row.row_id, text: row.model.name })); });
    if (!rows.some(function (row) { return row.row_id === view.rowId; })) view.rowId = rows.length ? rows[0].row_id : null;
    view.model.value = view.rowId || "";
    var row = rows.filter(function (r) { return r.row_id === view.rowId; })[0];
    var tasks = row ? get(report.order, row.row_id) || [] : [];  // in the order the family declared
    tasks.forEach(function (t) { view.task.appendChild(el("option", { value: t, text: t })); });
    if (tasks.indexOf(view.taskName) < 0) view.taskName = tasks.length ? tasks[0] : null;
    view.task.value = view.taskName || "";
    view.model.disabled = rows.length < 2;
    view.task.disabled = tasks.length < 2;
    return row;
  }

  function renderReport(report) {
    var view = state.reports.get(report.section);
    clear(view.chart);
    var row = renderReportControls(report, view);
    if (!row || !view.taskName) { view.chart.appendChild(el("p", { class: "note", text: report.empty })); return; }
    var title = report.title + " of " + row.model.name + " on " + view.taskName;
    var draw = REPORT_CHARTS.get(report.chart.kind);
    if (!draw) throw new Error("unknown report chart kind: " + report.chart.kind);
    view.chart.appendChild(draw(report.chart, get(get(row, report.section), view.taskName), title));
    view.chart.appendChild(el("p", { class: "note", text: get(get(report.notes, row.row_id), view.taskName) }));
  }

  function renderReports() { reports.forEach(renderReport); }

  function drawCountMatrix(spec, c, title) {
    // c.counts[i][j]: how often row label i was found at column j; cells show row percentages
    var n = c.labels.length, cell = 34, L = 58, T = 30;
    var W = L + n * cell + 16, H = T + n * cell + 46;
    var chart = svg("svg", { width: "100%", viewBox: "0 0 " + W + " " + H, role: "img" }, svg("title", { text: title }));
    c.labels.forEach(function (label, i) {
      var text = (spec.signed && label > 0 ? "+" : "") + label;
      chart.appendChild(svg("text", { x: L + i * cell + cell / 2, y: T - 8, "text-anchor": "middle", "font-size": 11, fill: "#1f2328", text: text }));
      chart.appendChild(svg("text", { x: L - 8, y: T + i * cell + cell / 2 + 4, "text-anchor": "end", "font-size": 11, fill: "#1f2328", text: text }));
    });
    c.counts.forEach(function (counts, i) {
      var total = counts.reduce(function (a, b) { return a + b; }, 0);
      counts.forEach(function (count, j) {
        var pct = total ? 100 * count / total : 0;
        var shade = Math.round(255 - 200 * pct / 100), blue = Math.round(255 - 90 * pct / 100);
        var fill = total ? "rgb(" + shade + "," + Math.round(255 - 150 * pct / 100) + "," + blue + ")" : "#f6f8fa";
        var tip = spec.cell.replace("{row}", String(c.labels[i])).replace("{column}", String(c.labels[j]));
        chart.appendChild(svg("rect", { x: L + j * cell, y: T + i * cell, width: cell - 1, height: cell - 1, fill: fill },
          svg("title", { text: tip + ": " + count + " (" + fmt(pct, 1) + "% of the row)" })));
        if (total) {
          chart.appendChild(svg("text", { x: L + j * cell + cell / 2, y: T + i * cell + cell / 2 + 4, "text-anchor": "middle", "font-size": 10,
            fill: pct > 55 ? "#fff" : "#1f2328", text: pct.toFixed(0) }));
        }
      });
    });
    // signed labels: a line between the negative and the positive ones
    var split = spec.signed ? c.labels.filter(function (label) { return label < 0; }).length : 0;
    if (split > 0 && split < n) {
      chart.appendChild(svg("line", { x1: L + split * cell - 0.5, x2: L + split * cell - 0.5, y1: T, y2: T + n * cell, stroke: "#59636e" }));
      chart.appendChild(svg("line", { x1: L, x2: L + n * cell, y1: T + split * cell - 0.5, y2: T + split * cell - 0.5, stroke: "#59636e" }));
    }
    chart.appendChild(svg("text", { x: L + n * cell / 2, y: H - 14, "text-anchor": "middle", "font-size": 12, fill: "#59636e", text: spec.columns }));
    chart.appendChild(svg("text", { x: 12, y: T + n * cell / 2, "text-anchor": "middle", "font-size": 12, fill: "#59636e",
      transform: "rotate(-90 12 " + (T + n * cell / 2) + ")", text: spec.rows }));
    return chart;
  }

  return {
    renderRadars: renderRadars,
    renderStran: renderStran,
    buildReportSections: buildReportSections,
    renderReports: renderReports
  };
})(LCPage);
