(function () {
  "use strict";
  // Every string below that comes from the data is inserted with textContent / createTextNode or
  // as the value of a fixed, non-event attribute. Nothing is ever parsed as HTML.
  var SVGNS = "http://www.w3.org/2000/svg";
  var PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#8C6D31", "#7F7F7F",
                 "#332288", "#117733", "#AA4499", "#882255"];

  function el(tag, attrs) {
    var node = document.createElement(tag);
    setAttrs(node, attrs);
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }
  function svg(tag, attrs) {
    var node = document.createElementNS(SVGNS, tag);
    setAttrs(node, attrs);
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }
  function setAttrs(node, attrs) {
    if (!attrs) return;
    Object.keys(attrs).forEach(function (key) {
      var value = attrs[key];
      if (value === null || value === undefined) return;
      if (key === "text") node.textContent = String(value);
      else if (key === "class") node.setAttribute("class", String(value));
      else if (/^on/i.test(key)) throw new Error("event attributes are not allowed: " + key);
      else node.setAttribute(key, String(value));
    });
  }
  function append(node, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) { child.forEach(function (c) { append(node, c); }); return; }
    node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function byId(id) { return document.getElementById(id); }
  function fmt(x, digits) { return (typeof x === "number" && isFinite(x)) ? x.toFixed(digits === undefined ? 3 : digits) : "—"; }
  function short(s, n) { s = String(s); return s.length > n ? s.slice(0, n) : s; }
  function json(value) { return JSON.stringify(value); }
  function own(obj, key) { return Object.prototype.hasOwnProperty.call(obj, key); }

  var data = JSON.parse(byId("leaderboard-data").textContent);
  var doc = data.doc;
  var info = data.metricInfo || {};
  var state = { board: null, view: null, sortKey: null, sortDir: -1, confModel: null, confTask: null };

  function metricInfo(name) {
    return own(info, name) ? info[name] : { label: name, description: name, range: [0, 1], radar: false, order: 100 };
  }
  function byOrder(a, b) {
    var ia = metricInfo(a), ib = metricInfo(b);
    return (ia.order - ib.order) || (a < b ? -1 : a > b ? 1 : 0);
  }
  function boardRows() {
    return doc.rows.filter(function (row) { return row.settings_id === state.board; });
  }
  function colorOf(rowId) {
    var rows = boardRows();
    for (var i = 0; i < rows.length; i++) if (rows[i].row_id === rowId) return PALETTE[i % PALETTE.length];
    return "#444";
  }
  function latestFailure(name) {
    var found = null;
    doc.failures.forEach(function (f) { if (f.name === name) found = f; });
    return found;
  }

  // ---------------------------------------------------------------- header and controls
  function renderMeta() {
    var nights = doc.nights.map(function (n) { return n.night; });
    var text = "Generated " + doc.generated_at + " · suite " + doc.generator.suite_version + " · " +
      doc.rows.length + " row" + (doc.rows.length === 1 ? "" : "s") + " on " + doc.boards.length + " board" +
      (doc.boards.length === 1 ? "" : "s");
    if (nights.length) text += " · nights " + nights[0] + (nights.length > 1 ? " … " + nights[nights.length - 1] : "");
    byId("meta").textContent = text;
  }

  function renderBoardSelect() {
    var select = byId("board-select");
    clear(select);
    doc.boards.forEach(function (board) {
      select.appendChild(el("option", { value: board.settings_id, text: board.label + " — " + board.n_rows + " model" + (board.n_rows === 1 ? "" : "s") }));
    });
    if (!state.board && doc.boards.length) state.board = doc.boards[0].settings_id;
    select.value = state.board || "";
    select.disabled = doc.boards.length < 2;
    var note = byId("board-note");
    clear(note);
    if (doc.boards.length > 1) {
      note.className = "banner warn";
      append(note, doc.boards.length + " boards: rows measured under different settings (tasks, limit, items per instance, seeds, prompts, chat template, suite or lm-eval version) are kept apart and never ranked against each other. Pick a board above.");
    } else {
      note.className = "note";
      append(note, doc.boards.length ? "One board: every row below was measured under the same settings." : "No rows yet.");
    }
  }

  function entriesOfBoard() {
    // name -> {kind, size}; groups first, by number of instances
    var entries = {};
    boardRows().forEach(function (row) {
      Object.keys(row.tasks).forEach(function (name) {
        var entry = row.tasks[name];
        var size = entry.n_instances + (entry.kind === "group" ? 1e9 * entry.subtasks.length : 0);
        if (!own(entries, name) || entries[name].size < size) entries[name] = { kind: entry.kind, size: size };
      });
    });
    return Object.keys(entries).sort(function (a, b) {
      return (entries[b].size - entries[a].size) || (a < b ? -1 : 1);
    }).map(function (name) { return { name: name, kind: entries[name].kind }; });
  }

  function renderViewSelect() {
    var select = byId("view-select");
    clear(select);
    var entries = entriesOfBoard();
    var groups = el("optgroup", { label: "Groups" }), tasks = el("optgroup", { label: "Tasks" });
    entries.forEach(function (e) {
      (e.kind === "group" ? groups : tasks).appendChild(el("option", { value: e.name, text: e.name }));
    });
    if (groups.childNodes.length) select.appendChild(groups);
    if (tasks.childNodes.length) select.appendChild(tasks);
    var names = entries.map(function (e) { return e.name; });
    if (names.indexOf(state.view) < 0) { state.view = names.length ? names[0] : null; state.sortKey = null; }
    select.value = state.view || "";
  }

  // ---------------------------------------------------------------- table
  function viewMetrics() {
    var names = {};
    boardRows().forEach(function (row) {
      var entry = row.tasks[state.view];
      if (entry) Object.keys(entry.metrics).forEach(function (m) { names[m] = true; });
    });
    return Object.keys(names).sort(byOrder);
  }

  function higherIsBetter(metric) {
    var result = true;
    boardRows().forEach(function (row) {
      var entry = row.tasks[state.view];
      if (entry && own(entry.metrics, metric) && entry.metrics[metric].higher_is_better === false) result = false;
    });
    return result;
  }

  function sortValue(row, key) {
    var entry = row.tasks[state.view];
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

  function modelCell(row) {
    var failure = latestFailure(row.model.name);
    var cell = el("td", { class: "model" },
      el("div", null, el("span", { class: "swatch", style: null }), el("span", { class: "modelname", text: row.model.name })));
    cell.firstChild.firstChild.style.background = colorOf(row.row_id);
    if (failure) {
      cell.firstChild.appendChild(el("span", { class: "badge", title: "Latest run failed (" + failure.failed_at + "): " + failure.error.message, text: "⚠ last run failed" }));
    }
    var rev = row.model.revision === "unpinned" ? "unpinned" : short(row.model.revision, 12);
    cell.appendChild(el("div", { class: "sub", title: "revision " + row.model.revision + " (" + row.model.revision_source + ")",
      text: row.model.backend + " · rev " + rev + " · " + row.model.precision + " · prompts " + row.prompt_set.id.slice(0, 6) }));
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
    var columns = [{ key: "model", label: "Model", cls: "model", title: "model, backend, revision, precision, prompt-template set" }];
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
      var entry = row.tasks[state.view];
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
      var error = el("td", null, el("div", { text: f.error.message + (f.error.returncode !== null ? " (exit status " + f.error.returncode + ")" : "") }));
      if (f.error.stderr_tail) error.appendChild(el("details", null, el("summary", { text: "last lines of stderr" }), el("pre", { text: f.error.stderr_tail })));
      if (f.log_file) error.appendChild(el("div", { class: "sub", text: "log: " + f.log_file }));
      body.appendChild(el("tr", null,
        el("td", null, el("div", { class: "modelname", text: f.name }), el("div", { class: "sub", text: f.backend + (f.model_args ? " · " + f.model_args : "") })),
        el("td", { text: f.night || "—" }), el("td", { text: f.failed_at }), error));
    });
    table.appendChild(body);
    box.appendChild(table);
  }

  // ---------------------------------------------------------------- radar
  function radarValues(row) {
    // metric -> {score, source}; per metric the entry (task or group) with the most instances
    var out = {};
    Object.keys(row.tasks).forEach(function (name) {
      var entry = row.tasks[name];
      Object.keys(entry.metrics).forEach(function (m) {
        if (!metricInfo(m).radar) return;
        var value = entry.metrics[m];
        var weight = value.n + (entry.kind === "group" ? 0.5 : 0);
        if (!own(out, m) || out[m].weight < weight) out[m] = { score: value.score, source: name, weight: weight, ci95: value.ci95 };
      });
    });
    return out;
  }

  function renderRadars() {
    var box = byId("radars");
    clear(box);
    var rows = boardRows();
    var axes = {};
    var values = rows.map(function (row) { var v = radarValues(row); Object.keys(v).forEach(function (m) { axes[m] = true; }); return v; });
    var names = Object.keys(axes).sort(byOrder);
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
        var value = own(values[r], m) ? values[r][m] : null;
        var sin = Math.sin(-Math.PI / 2 + 2 * Math.PI * i / names.length);
        var top = label[1] + (sin < -0.5 ? -6 : sin > 0.5 ? 8 : 0);
        chart.appendChild(svg("text", { x: label[0], y: top, "text-anchor": anchor, "font-size": 11, fill: "#1f2328" },
          metricInfo(m).label,
          svg("tspan", { x: label[0], dy: 13, fill: "#59636e", text: value ? fmt(value.score, 2) : "n/a" }),
          svg("title", { text: metricInfo(m).description + (value ? " — from " + value.source : " — not measured") })));
      });
      var pts = names.map(function (m, i) {
        var value = own(values[r], m) ? values[r][m] : null;
        var range = metricInfo(m).range;
        var frac = value ? Math.max(0, Math.min(1, (value.score - range[0]) / (range[1] - range[0]))) : 0;
        return point(i, frac);
      });
      var polygon = svg("polygon", { points: pts.map(function (p) { return p.join(","); }).join(" "), stroke: color, "stroke-width": 2, fill: color });
      polygon.setAttribute("fill-opacity", "0.22");
      chart.appendChild(polygon);
      pts.forEach(function (p, i) {
        var value = own(values[r], names[i]) ? values[r][names[i]] : null;
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

  // ---------------------------------------------------------------- s_tran(K) against K
  function stranMetrics(entry) {
    return Object.keys(entry.metrics).filter(function (m) { return typeof metricInfo(m).k === "number"; });
  }

  function renderStran() {
    var box = byId("stran"), note = byId("stran-note");
    clear(box);
    var rows = boardRows();
    var source = null;
    if (rows.some(function (row) { var e = row.tasks[state.view]; return e && stranMetrics(e).length; })) source = state.view;
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
    if (!source) { note.textContent = "No s_tran(K) metric on this board."; return; }
    note.textContent = "From " + source + (source === state.view ? "" : " (the selected view has no s_tran metric)") +
      ". Points are lm-eval's scores, bars their 95% bootstrap intervals.";
    var ks = {};
    rows.forEach(function (row) { var e = row.tasks[source]; if (e) stranMetrics(e).forEach(function (m) { ks[metricInfo(m).k] = m; }); });
    var kList = Object.keys(ks).map(Number).sort(function (a, b) { return a - b; });
    var W = 560, H = 300, L = 52, R = 20, T = 16, B = 44;
    var chart = svg("svg", { width: "100%", viewBox: "0 0 " + W + " " + H, role: "img" },
      svg("title", { text: "s_tran(K) against K" }));
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
    chart.appendChild(svg("text", { x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle", "font-size": 12, fill: "#59636e", text: "K (items per sampled subset)" }));
    chart.appendChild(svg("text", { x: 14, y: (T + H - B) / 2, "text-anchor": "middle", "font-size": 12, fill: "#59636e",
      transform: "rotate(-90 14 " + (T + H - B) / 2 + ")", text: "s_tran(K)" }));
    var legend = el("div", { class: "legend" });
    rows.forEach(function (row, r) {
      var e = row.tasks[source];
      if (!e) return;
      var color = colorOf(row.row_id), offset = (r - (rows.length - 1) / 2) * 5;
      var points = kList.filter(function (k) { return own(e.metrics, ks[k]); }).map(function (k) {
        return { k: k, v: e.metrics[ks[k]] };
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
          svg("title", { text: row.model.name + ": s_tran(" + p.k + ") = " + fmt(p.v.score, 4) +
            (p.v.ci95 ? " [" + fmt(p.v.ci95[0], 4) + ", " + fmt(p.v.ci95[1], 4) + "]" : "") + ", n = " + p.v.n })));
      });
      var item = el("span", null, el("span", { class: "swatch" }), row.model.name);
      item.firstChild.style.background = color;
      legend.appendChild(item);
    });
    box.appendChild(chart);
    box.appendChild(legend);
  }

  // ---------------------------------------------------------------- confusion matrix
  function renderConfusionControls() {
    var rows = boardRows().filter(function (row) { return Object.keys(row.confusion).length > 0; });
    var modelSelect = byId("conf-model"), taskSelect = byId("conf-task");
    clear(modelSelect); clear(taskSelect);
    rows.forEach(function (row) { modelSelect.appendChild(el("option", { value: row.row_id, text: row.model.name })); });
    if (!rows.some(function (row) { return row.row_id === state.confModel; })) state.confModel = rows.length ? rows[0].row_id : null;
    modelSelect.value = state.confModel || "";
    var row = rows.filter(function (r) { return r.row_id === state.confModel; })[0];
    // the prompted-ranking protocol first, then the tasks with the most parsed rankings
    var tasks = row ? Object.keys(row.confusion).sort(function (a, b) {
      var ra = /_ranking$/.test(a) ? 0 : 1, rb = /_ranking$/.test(b) ? 0 : 1;
      return (ra - rb) || (row.confusion[b].n_rankings - row.confusion[a].n_rankings) || (a < b ? -1 : 1);
    }) : [];
    tasks.forEach(function (t) { taskSelect.appendChild(el("option", { value: t, text: t })); });
    if (tasks.indexOf(state.confTask) < 0) state.confTask = tasks.length ? tasks[0] : null;
    taskSelect.value = state.confTask || "";
    modelSelect.disabled = rows.length < 2;
    taskSelect.disabled = tasks.length < 2;
    return row;
  }

  function renderConfusion() {
    var box = byId("confusion");
    clear(box);
    var row = renderConfusionControls();
    if (!row || !state.confTask) { box.appendChild(el("p", { class: "note", text: "No δ-CAUSAL ranking task on this board." })); return; }
    var c = row.confusion[state.confTask];
    var n = c.labels.length, cell = 34, L = 58, T = 30;
    var W = L + n * cell + 16, H = T + n * cell + 46;
    var chart = svg("svg", { width: "100%", viewBox: "0 0 " + W + " " + H, role: "img" },
      svg("title", { text: "Confusion matrix of " + row.model.name + " on " + state.confTask }));
    c.labels.forEach(function (label, i) {
      var text = (label > 0 ? "+" : "") + label;
      chart.appendChild(svg("text", { x: L + i * cell + cell / 2, y: T - 8, "text-anchor": "middle", "font-size": 11, fill: "#1f2328", text: text }));
      chart.appendChild(svg("text", { x: L - 8, y: T + i * cell + cell / 2 + 4, "text-anchor": "end", "font-size": 11, fill: "#1f2328", text: text }));
    });
    c.counts.forEach(function (counts, i) {
      var total = counts.reduce(function (a, b) { return a + b; }, 0);
      counts.forEach(function (count, j) {
        var pct = total ? 100 * count / total : 0;
        var shade = Math.round(255 - 200 * pct / 100), blue = Math.round(255 - 90 * pct / 100);
        var fill = total ? "rgb(" + shade + "," + Math.round(255 - 150 * pct / 100) + "," + blue + ")" : "#f6f8fa";
        chart.appendChild(svg("rect", { x: L + j * cell, y: T + i * cell, width: cell - 1, height: cell - 1, fill: fill },
          svg("title", { text: "generation label " + c.labels[i] + " ranked at the position of " + c.labels[j] + ": " + count + " (" + fmt(pct, 1) + "% of the row)" })));
        if (total) {
          chart.appendChild(svg("text", { x: L + j * cell + cell / 2, y: T + i * cell + cell / 2 + 4, "text-anchor": "middle", "font-size": 10,
            fill: pct > 55 ? "#fff" : "#1f2328", text: pct.toFixed(0) }));
        }
      });
    });
    var split = c.labels.filter(function (label) { return label < 0; }).length;
    if (split > 0 && split < n) {
      chart.appendChild(svg("line", { x1: L + split * cell - 0.5, x2: L + split * cell - 0.5, y1: T, y2: T + n * cell, stroke: "#59636e" }));
      chart.appendChild(svg("line", { x1: L, x2: L + n * cell, y1: T + split * cell - 0.5, y2: T + split * cell - 0.5, stroke: "#59636e" }));
    }
    chart.appendChild(svg("text", { x: L + n * cell / 2, y: H - 14, "text-anchor": "middle", "font-size": 12, fill: "#59636e", text: "ranked position (named by the label that belongs there)" }));
    chart.appendChild(svg("text", { x: 12, y: T + n * cell / 2, "text-anchor": "middle", "font-size": 12, fill: "#59636e",
      transform: "rotate(-90 12 " + (T + n * cell / 2) + ")", text: "generation label" }));
    box.appendChild(chart);
    box.appendChild(el("p", { class: "note", text: c.n_rankings + " parsed ranking" + (c.n_rankings === 1 ? "" : "s") + " of " + c.n_samples +
      " instances; unparseable: " + c.n_unparseable_generation + " generation, " + c.n_unparseable_ranking + " ranking. Row percentages; a consistent model fills the diagonal." }));
  }

  // ---------------------------------------------------------------- provenance
  function kv(pairs) {
    var dl = el("dl", { class: "kv" });
    pairs.forEach(function (p) {
      if (p[1] === undefined) return;
      dl.appendChild(el("dt", { text: p[0] }));
      dl.appendChild(el("dd", { class: p[2] || null, text: p[1] === null ? "—" : String(p[1]) }));
    });
    return dl;
  }

  function renderProvenance() {
    var box = byId("provenance");
    clear(box);
    var rows = boardRows();
    if (!rows.length) return;
    var settings = rows[0].settings, p0 = rows[0].provenance;
    var seeds = Object.keys(settings.seeds).map(function (k) { return k + " " + settings.seeds[k]; }).join(", ");
    box.appendChild(el("h3", { text: "Settings shared by every row of this board" }));
    box.appendChild(kv([
      ["Board", state.board, "mono"],
      ["Suite version", settings.suite_version],
      ["lm-eval version", settings.lm_eval_version],
      ["Instances per task (--limit)", settings.limit === null ? "all" : settings.limit],
      ["Items per instance (max_items)", p0.items_per_instance === null ? "all (or per task, below)" : p0.items_per_instance],
      ["Task seed (metadata seed)", p0.seed],
      ["lm-eval seeds", seeds],
      ["Shared run options", json(p0.run_options), "mono"],
      ["System instruction", settings.system_instruction_sha === null ? "none" : "sha " + settings.system_instruction_sha],
      ["Few-shot as multi-turn", settings.fewshot_as_multiturn],
      ["Generation kwargs", json(settings.gen_kwargs), "mono"],
      ["Intervals", Math.round(doc.bootstrap.confidence * 100) + "% " + doc.bootstrap.method + "; " + doc.bootstrap.n_resamples + " resamples, seed " + doc.bootstrap.seed]
    ]));
    var table = el("table", { class: "plain" }, el("thead", null, el("tr", null,
      el("th", { text: "Task" }), el("th", { text: "Version" }), el("th", { text: "n-shot" }), el("th", { text: "Instances (run / available)" }),
      el("th", { text: "Options" }), el("th", { text: "Config hash" }))));
    var body = el("tbody");
    Object.keys(settings.tasks).sort().forEach(function (task) {
      var t = settings.tasks[task];
      body.appendChild(el("tr", null, el("td", { class: "mono", text: task }), el("td", { text: t.version === null ? "—" : String(t.version) }),
        el("td", { text: t.num_fewshot === null ? "—" : String(t.num_fewshot) }),
        el("td", { text: (t.n_effective === null ? "?" : t.n_effective) + " / " + (t.n_original === null ? "?" : t.n_original) }),
        el("td", { class: "mono", text: json(t.options) }),
        el("td", { class: "mono", title: t.config_hash, text: t.config_hash.slice(0, 12) })));
    });
    table.appendChild(body);
    box.appendChild(el("details", null, el("summary", { text: "Tasks (" + Object.keys(settings.tasks).length + ")" }), table));

    box.appendChild(el("h3", { text: "Per model" }));
    rows.forEach(function (row) {
      var p = row.provenance;
      var hashes = Object.keys(p.task_hashes).sort().map(function (t) { return t + ": " + p.task_hashes[t]; }).join("\n");
      var details = el("details", null, el("summary", { text: row.model.name }));
      details.appendChild(kv([
        ["Backend (--model)", row.model.backend, "mono"],
        ["--model_args", row.model.model_args || "—", "mono"],
        ["Revision / checksum", row.model.revision + " (" + row.model.revision_source + ")", "mono"],
        ["Precision", row.model.precision],
        ["Prompt-template set", row.prompt_set.id, "mono"],
        ["Measured at", row.measured_at + (row.night ? " (night " + row.night + ")" : "")],
        ["Run time", p.run_time_seconds === null ? "—" : fmt(p.run_time_seconds, 0) + " s"],
        ["Chat template applied", p.chat_template_applied ? "yes" : "no"],
        ["Chat template hash", p.chat_template_sha, "mono"],
        ["transformers", p.transformers_version],
        ["Suite git hash", p.git_hash, "mono"],
        ["Batch size / device", json(p.batch_size) + " / " + (p.device === null ? "—" : p.device)],
        ["Results file", p.results_file, "mono"]
      ]));
      if (hashes) details.appendChild(el("details", null, el("summary", { text: "lm-eval task hashes (documents + prompts)" }), el("pre", { text: hashes })));
      box.appendChild(details);
    });

    if (doc.nights.length) {
      box.appendChild(el("h3", { text: "History" }));
      var list = el("table", { class: "plain" }, el("thead", null, el("tr", null, el("th", { text: "Night" }), el("th", { text: "Rows" }),
        el("th", { text: "Failures" }), el("th", { text: "Snapshot" }))));
      var nb = el("tbody");
      doc.nights.slice().reverse().forEach(function (n) {
        nb.appendChild(el("tr", null, el("td", { text: n.night }), el("td", { text: String(n.rows) }), el("td", { text: String(n.failures) }),
          el("td", { class: "mono", text: n.history_file || "—" })));
      });
      list.appendChild(nb);
      box.appendChild(list);
    }
  }

  // ---------------------------------------------------------------- wiring
  function renderBoard() {
    renderBoardSelect();
    renderViewSelect();
    renderTable();
    renderRadars();
    renderStran();
    renderConfusion();
    renderProvenance();
  }

  function main() {
    renderMeta();
    renderFailures();
    renderBoard();
    byId("board-select").addEventListener("change", function (event) {
      state.board = event.target.value; state.sortKey = null; renderBoard();
    });
    byId("view-select").addEventListener("change", function (event) {
      state.view = event.target.value; state.sortKey = null; renderTable(); renderStran();
    });
    byId("conf-model").addEventListener("change", function (event) { state.confModel = event.target.value; renderConfusion(); });
    byId("conf-task").addEventListener("change", function (event) { state.confTask = event.target.value; renderConfusion(); });
    document.body.setAttribute("data-rendered", "ok");
  }

  try {
    main();
  } catch (error) {
    var box = byId("error");
    box.hidden = false;
    box.textContent = "The page could not be drawn: " + (error && error.message ? error.message : String(error));
    document.body.setAttribute("data-rendered", "error");
  }
})();
