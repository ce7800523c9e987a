// Part 2 of the page script (leaderboard/page/render.py PAGE_SCRIPTS): the table and the failures, as LCTable.
var LCTable = (function (P) {
  "use strict";
  var el = P.el, svg = P.svg, clear = P.clear, byId = P.byId, fmt = P.fmt, short = P.short, own = P.own, get = P.get,
      data = P.data, doc = P.doc, state = P.state, metricInfo = P.metricInfo, byOrder = P.byOrder,
      boardRows = P.boardRows, colorOf = P.colorOf, latestFailure = P.latestFailure;

  // ---------------------------------------------------------------- table
  function viewMetrics() {
    var names = new Map();
    boardRows().forEach(function (row) {
      var entry = get(row.tasks, state.view);
      if (entry) Object.keys(entry.metrics).forEach(function (m) { names.set(m, true); });
    });
    return Array.from(names.keys()).sort(byOrder);
  }

  function higherIsBetter(metric) {
    var result = true;
    boardRows().forEach(function (row) {
      var entry = get(row.tasks, state.view);
      if (entry && own(entry.metrics, metric) && entry.metrics[metric].higher_is_better === false) result = false;
    });
    return result;
  }

  function sortValue(row, key) {
    var entry = get(row.tasks, state.view);
    if (key === "model") return row.model.name.toLowerCase();
    if (key === "unparseable") return entry ? entry.unparseable : null;
    if (key === "n") return entry ? entry.n_instances : null;
    if (key === "date") return row.measured_at;
    if (!entry || !own(entry.metrics, key)) return null;
    return entry.metrics[key].score;
  }

  function intervalBar(metric, value) {
    var range = metricInfo(metric).range, w = 80, h = 10;
    function x(v) { return 2 + (w - 4) * Math.max(0, Math.min(1, (v - range[0]) / (range[1] - range[0]))); }
    var box = svg("svg", { width: w, height: h, viewBox: "0 0 " + w + " " + h, "aria-hidden": "true" });
    box.appendChild(svg("line", { x1: 2, x2: w - 2, y1: h / 2, y2: h / 2, stroke: "#d1d9e0", "stroke-width": 2, "stroke-linecap": "round" }));
    if (value.ci95) {
      box.appendChild(svg("line", { x1: x(value.ci95[0]), x2: x(value.ci95[1]), y1: h / 2, y2: h / 2, stroke: "#54aeff", "stroke-width": 6, "stroke-linecap": "round" }));
    }
    box.appendChild(svg("circle", { cx: x(value.score), cy: h / 2, r: 3.2, fill: "#0b3d91" }));
    return box;
  }

  function metricCell(metric, value) {
    if (!value) return el("td", { class: "na", text: "—" });
    var title = metricInfo(metric).label + " = " + fmt(value.score, 4) +
      (value.ci95 ? ", 95% CI [" + fmt(value.ci95[0], 4) + ", " + fmt(value.ci95[1], 4) + "]" : ", no interval (fewer than 2 instances)") +
      ", n = " + value.n;
    return el("td", { title: title },
      el("div", { class: "score", text: fmt(value.score) }),
      intervalBar(metric, value),
      el("div", { class: "ci", text: value.ci95 ? "[" + fmt(value.ci95[0]) + ", " + fmt(value.ci95[1]) + "]" : "n < 2" }));
  }

  function prompting(p) {
    var text = p.chat_template_applied ? "chat template" + (p.chat_template_sha ? " " + p.chat_template_sha.slice(0, 8) : "") : "no chat template";
    if (p.system_instruction_sha) text += " · system instruction " + p.system_instruction_sha.slice(0, 8);
    return text;
  }

  function modelCell(row) {
    var failure = latestFailure(row.model.name);
    var cell = el("td", { class: "model" },
      el("div", null, el("span", { class: "swatch", style: null }), el("span", { class: "modelname", text: row.model.name })));
    cell.firstChild.firstChild.style.background = colorOf(row.row_id);
    if (failure) {
      cell.firstChild.appendChild(el("span", { class: "badge", title: "Latest run failed (" + failure.failed_at + "): " + failure.error.code + ": " + failure.error.message, text: "⚠ last run failed" }));
    }
    var rev = row.model.revision === "unpinned" ? "unpinned" : short(row.model.revision, 12);
    cell.appendChild(el("div", { class: "sub", title: "revision " + row.model.revision + " (" + row.model.revision_source + ")",
      text: row.model.backend + " · rev " + rev + " · " + row.model.precision + " · prompts " + row.prompt_set.id.slice(0, 6) }));
    cell.appendChild(el("div", { class: "sub prompting", title: "how this model was prompted (a property of the row, not of the board)",
      text: prompting(row.provenance) }));
    return cell;
  }

  function renderTable() {
    var table = byId("leaderboard");
    clear(table);
    var rows = boardRows();
    if (!rows.length || !state.view) { table.appendChild(el("caption", { text: "No rows on this board." })); return; }
    var metrics = viewMetrics();
    if (!state.sortKey) {
      state.sortKey = metrics.length ? metrics[0] : "model";
      state.sortDir = metrics.length && higherIsBetter(metrics[0]) ? -1 : 1;
    }
    var columns = [{ key: "model", label: "Model", cls: "model", title: "model, backend, revision, precision, prompt-template set; how it was prompted (chat template, system instruction)" }];
    metrics.forEach(function (m) { columns.push({ key: m, label: metricInfo(m).label, title: metricInfo(m).description }); });
    columns.push({ key: "unparseable", label: "Unparseable", title: "outputs that could not be parsed (sum over instances)" });
    columns.push({ key: "n", label: "Instances", title: "instances (documents) evaluated" });
    columns.push({ key: "date", label: "Measured", title: "start of the lm-eval run (UTC)" });

    var head = el("tr", null, el("th", { text: "#" }));
    columns.forEach(function (col) {
      var th = el("th", { class: col.cls || null, title: col.title, scope: "col" });
      if (state.sortKey === col.key) th.setAttribute("aria-sort", state.sortDir < 0 ? "descending" : "ascending");
      var button = el("button", { type: "button", text: col.label });
      button.addEventListener("click", function () {
        if (state.sortKey === col.key) state.sortDir = -state.sortDir;
        else {
          state.sortKey = col.key;
          state.sortDir = (col.key === "model" || col.key === "unparseable" || col.key === "n") ? 1 : (col.key === "date" ? -1 : (higherIsBetter(col.key) ? -1 : 1));
        }
        renderTable();
      });
      th.appendChild(button);
      head.appendChild(th);
    });
    table.appendChild(el("thead", null, head));

    var sorted = rows.slice().sort(function (a, b) {
      var va = sortValue(a, state.sortKey), vb = sortValue(b, state.sortKey);
      if (va === null && vb === null) return 0;
      if (va === null) return 1;
      if (vb === null) return -1;
      if (va < vb) return -state.sortDir;
      if (va > vb) return state.sortDir;
      return a.model.name < b.model.name ? -1 : 1;
    });
    var body = el("tbody");
    sorted.forEach(function (row, index) {
      var entry = get(row.tasks, state.view);
      var tr = el("tr", { "data-row-id": row.row_id }, el("td", { text: String(index + 1) }), modelCell(row));
      metrics.forEach(function (m) { tr.appendChild(metricCell(m, entry && own(entry.metrics, m) ? entry.metrics[m] : null)); });
      var counts = entry ? Object.keys(entry.counts).map(function (c) { return c + ": " + entry.counts[c].total; }).join(", ") : "";
      tr.appendChild(el("td", { title: counts || "no unparseable counts reported", text: entry ? String(entry.unparseable) : "—" }));
      tr.appendChild(el("td", { text: entry ? String(entry.n_instances) + (entry.n_original !== null ? " / " + entry.n_original : "") : "—",
        title: "evaluated / available" }));
      tr.appendChild(el("td", { class: "sub", title: row.measured_at + (row.night ? " (night " + row.night + ")" : ""),
        text: row.measured_at.slice(0, 10) }));
      body.appendChild(tr);
    });
    table.appendChild(body);
  }

  // ---------------------------------------------------------------- failures
  function renderFailures() {
    var section = byId("failures-section"), box = byId("failures");
    clear(box);
    section.hidden = doc.failures.length === 0;
    if (!doc.failures.length) return;
    var table = el("table", { class: "plain" },
      el("thead", null, el("tr", null, el("th", { text: "Model" }), el("th", { text: "Night" }), el("th", { text: "Failed at" }), el("th", { text: "Error" }))));
    var body = el("tbody");
    doc.failures.forEach(function (f) {
      // a code of the closed vocabulary and its fixed sentence (the schema's failure_error), never a run's text
      var e = f.error, facts = [];
      if (e.shard !== null) facts.push("shard " + e.shard);
      if (e.http_status !== null) facts.push("HTTP " + e.http_status);
      if (e.error_class !== null) facts.push(e.error_class);
      if (e.returncode !== null) facts.push("exit status " + e.returncode);
      if (e.field !== null) facts.push("model list field " + e.field);
      var error = el("td", null, el("div", null, el("code", { text: e.code }), " " + e.message));
      if (facts.length) error.appendChild(el("div", { class: "sub", text: e.stage + " · " + facts.join(" · ") }));
      if (f.log_file) error.appendChild(el("div", { class: "sub", text: "log: " + f.log_file }));
      body.appendChild(el("tr", null,
        el("td", null, el("div", { class: "modelname", text: f.name }), el("div", { class: "sub", text: f.backend + (f.model_args ? " · " + f.model_args : "") })),
        el("td", { text: f.night || "—" }), el("td", { text: f.failed_at }), error));
    });
    table.appendChild(body);
    box.appendChild(table);
  }

  return {
    renderTable: renderTable,
    renderFailures: renderFailures
  };
})(LCPage);
