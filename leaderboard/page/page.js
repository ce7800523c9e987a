// Part 1 of the page script (leaderboard/page/render.py PAGE_SCRIPTS): helpers, data, state, header and
// controls, as the namespace LCPage that page_table.js, page_charts.js and page_main.js read.
var LCPage = (function () {
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
  // Names (tasks, metrics, models) are data: a task named "__proto__" or "constructor" must be an
  // ordinary key. Tables the script builds are Maps; reads of the parsed data go through own / get,
  // never obj[name] alone (row.tasks["constructor"] would be Object's constructor).
  function own(obj, key) { return obj !== null && obj !== undefined && Object.prototype.hasOwnProperty.call(obj, key); }
  function get(obj, key) { return own(obj, key) ? obj[key] : undefined; }

  var data = JSON.parse(byId("leaderboard-data").textContent);
  var doc = data.doc;
  var info = data.metricInfo || {};
  var reports = data.reports || [];
  // reports: per declared report section, its selects, chart box and the picked row and task
  var state = { board: null, view: null, sortKey: null, sortDir: -1, reports: new Map() };

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
      append(note, doc.boards.length + " boards: rows measured under different settings (tasks, limit, items per instance, seeds, prompts, suite or lm-eval version) are kept apart and never ranked against each other; how each model is prompted (chat template, system instruction) is shown per row and does not split boards. Pick a board above.");
    } else {
      note.className = "note";
      append(note, doc.boards.length ? "One board: every row below was measured under the same settings." : "No rows yet.");
    }
  }

  function entriesOfBoard() {
    // name -> {kind, size}; groups first, by number of instances; an entry with no metric (a group of
    // families, which share none) last, so the first view shows scores
    var entries = new Map();
    boardRows().forEach(function (row) {
      Object.keys(row.tasks).forEach(function (name) {
        var entry = row.tasks[name];
        var size = Object.keys(entry.metrics).length ? entry.n_instances + (entry.kind === "group" ? 1e9 * entry.subtasks.length : 0) : -1;
        if (!entries.has(name) || entries.get(name).size < size) entries.set(name, { kind: entry.kind, size: size });
      });
    });
    return Array.from(entries.keys()).sort(function (a, b) {
      return (entries.get(b).size - entries.get(a).size) || (a < b ? -1 : 1);
    }).map(function (name) { return { name: name, kind: entries.get(name).kind }; });
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

  return {
    el: el,
    svg: svg,
    clear: clear,
    byId: byId,
    fmt: fmt,
    short: short,
    own: own,
    get: get,
    json: json,
    data: data,
    doc: doc,
    reports: reports,
    state: state,
    metricInfo: metricInfo,
    byOrder: byOrder,
    boardRows: boardRows,
    colorOf: colorOf,
    latestFailure: latestFailure,
    renderMeta: renderMeta,
    renderBoardSelect: renderBoardSelect,
    renderViewSelect: renderViewSelect
  };
})();
