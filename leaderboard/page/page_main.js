// Part 4 of the page script (leaderboard/page/render.py PAGE_SCRIPTS): provenance and wiring; draws the page.
(function (P, T, C) {
  "use strict";
  var el = P.el, clear = P.clear, byId = P.byId, fmt = P.fmt, json = P.json, data = P.data, doc = P.doc,
      state = P.state, boardRows = P.boardRows, renderMeta = P.renderMeta,
      renderBoardSelect = P.renderBoardSelect, renderViewSelect = P.renderViewSelect;
  var renderTable = T.renderTable, renderFailures = T.renderFailures;
  var renderRadars = C.renderRadars, renderStran = C.renderStran, buildReportSections = C.buildReportSections,
      renderReports = C.renderReports;

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
        ["System instruction", p.system_instruction_sha === null ? "none" : "sha " + p.system_instruction_sha, "mono"],
        ["Few-shot as multi-turn", p.fewshot_as_multiturn],
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
    renderReports();
    renderProvenance();
  }

  function main() {
    buildReportSections();
    renderMeta();
    renderFailures();
    renderBoard();
    byId("board-select").addEventListener("change", function (event) {
      state.board = event.target.value; state.sortKey = null; renderBoard();
    });
    byId("view-select").addEventListener("change", function (event) {
      state.view = event.target.value; state.sortKey = null; renderTable(); renderStran();
    });
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
})(LCPage, LCTable, LCCharts);
