// edukg explorer: comparing frameworks and a curriculum's coverage, over the public API.
// Registers its views for explore.js, which calls them with its helpers (h).
(() => {
  "use strict";
  const views = (window.edukgViews = window.edukgViews || []);
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const pct = (n, d) => (d ? Math.round((100 * n) / d) : 0);
  const bar = (h, value) => `<span class="bar-wrap" aria-hidden="true"><span class="bar" style="width:${Math.round((value || 0) * 100)}%"></span></span>${(value ?? 0).toFixed(2)}`;

  async function frameworkOptions(h, chosen) {
    const fws = (await h.all("/standards-frameworks", { includeNonCurrent: "true" }))
      .sort((a, b) => h.natural(`${a.jurisdiction} ${a.name}`, `${b.jurisdiction} ${b.name}`));
    return { fws, html: (sel) => fws.map((f) => `<option value="${h.esc(f.caseIdentifierUUID)}"${f.caseIdentifierUUID === sel ? " selected" : ""}>${h.esc(f.jurisdiction)}: ${h.esc(f.name)}</option>`).join("") };
  }

  const GRADES = ["PK", "K", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"];
  const gradeOptions = (h, chosen) => `<option value="">All grades</option>` + GRADES.map((g) => `<option${g === chosen ? " selected" : ""}>${h.esc(g)}</option>`).join("");

  // The grouping just under the framework (a course: California's "Algebra I") of each
  // standard whose code others in the list share, fetched a few at a time.
  async function courseNames(h, standards) {
    const counts = new Map();
    for (const s of standards) counts.set(s.statementCode, (counts.get(s.statementCode) || 0) + 1);
    const shared = standards.filter((s) => s.statementCode && counts.get(s.statementCode) > 1).slice(0, 300);
    const out = new Map();
    for (let i = 0; i < shared.length; i += 8) {
      await Promise.all(shared.slice(i, i + 8).map(async (s) => {
        const chain = (await h.api(`/academic-standards/${s.caseIdentifierUUID}/ancestors`)).data;
        const top = chain[1];  // chain[0] is the framework
        if (top) out.set(s.identifier, top.description || top.statementCode || "");
      }));
    }
    return out;
  }

  // ---- Compare frameworks: each source standard with its best counterparts -----------
  async function compare(h) {
    document.title = "Compare frameworks · edukg explorer";
    const q = new URLSearchParams(location.search);
    const { fws, html } = await frameworkOptions(h);
    const source = q.get("source") || (fws[0] || {}).caseIdentifierUUID;
    const sourceFw = fws.find((f) => f.caseIdentifierUUID === source) || {};
    const target = q.get("target") || (fws.find((f) => f.caseIdentifierUUID !== source && f.academicSubject === sourceFw.academicSubject) || {}).caseIdentifierUUID || "";
    const grade = q.get("grade") || "";
    h.main.innerHTML = `<h1>Compare frameworks</h1>
      <p class="muted">Each standard of the first framework with its counterparts in the second: published crosswalks, and crosswalks derived from the learning components the two standards share (Jaccard: 1 = the same skills).</p>
      <div class="filters">
        <label for="source">From <select id="source">${html(source)}</select></label>
        <label for="target">To <select id="target">${html(target)}</select></label>
        <label for="grade">Grade <select id="grade">${gradeOptions(h, grade)}</select></label>
      </div>
      <section id="summary" aria-labelledby="sum-h"><h2 id="sum-h">Summary per grade</h2><div id="sum"></div></section>
      <section aria-labelledby="pairs-h"><h2 id="pairs-h">Standards</h2><ul class="plain fw-list" id="pairs"></ul></section>`;
    const f = (sel) => h.main.querySelector(sel);
    const go = () => { h.navigate("/compare", { source: f("#source").value, target: f("#target").value, grade: f("#grade").value }); };
    for (const sel of ["#source", "#target", "#grade"]) f(sel).onchange = go;
    if (!source || !target || source === target) { h.say("Pick two different frameworks."); return; }
    const params = { sourceFrameworkCaseIdentifierUUID: source, targetFrameworkCaseIdentifierUUID: target, gradeLevel: grade };
    const [summary, pairs, standards] = await Promise.all([
      h.api("/framework-crosswalks/summary", params),
      h.all("/framework-crosswalks", params),
      h.all("/academic-standards", { standardsFrameworkCaseIdentifierUUID: source, gradeLevel: grade, normalizedStatementType: "Standard" }),
    ]);
    f("#sum").innerHTML = `<table><thead><tr><th scope="col">Grade</th><th scope="col">Standards</th><th scope="col">With a counterpart</th><th scope="col">Jaccard ≥ 0.5</th><th scope="col">Jaccard 1.0</th><th scope="col">None</th></tr></thead><tbody>
      ${summary.data.map((r) => `<tr><th scope="row">${h.esc(r.gradeLevel ?? "—")}</th><td>${r.standards}</td><td>${r.withCounterpart} (${pct(r.withCounterpart, r.standards)}%)</td><td>${r.withJaccardAtLeastHalf}</td><td>${r.withExactCounterpart}</td><td>${r.withoutCounterpart}</td></tr>`).join("") || '<tr><td colspan="6">No standards.</td></tr>'}</tbody></table>`;
    const bySource = new Map();
    for (const p of pairs) { if (!bySource.has(p.source.identifier)) bySource.set(p.source.identifier, []); bySource.get(p.source.identifier).push(p); }
    standards.sort((a, b) => h.natural(a.statementCode, b.statementCode));
    const places = await courseNames(h, standards);  // "1.0" means little without its course
    f("#pairs").innerHTML = standards.map((s) => {
      const best = (bySource.get(s.identifier) || []).sort((a, b) => (b.jaccard || 0) - (a.jaccard || 0)).slice(0, 3);
      const rows = best.map((p) => `<li class="pair"><a href="${h.href(`/standards/${h.esc(p.target.caseIdentifierUUID)}`)}"><span class="code">${h.esc(p.target.statementCode || "standard")}</span></a> ${bar(h, p.jaccard)} <span class="chip">${h.esc(p.method)}</span> <span class="muted">${h.esc(p.sharedLCCount ?? "?")} shared</span></li>`).join("");
      const place = places.get(s.identifier);
      return `<li class="${best.length ? "matched" : "unmatched"}"><a href="${h.href(`/standards/${h.esc(s.caseIdentifierUUID)}`)}"><span class="code">${h.esc(s.statementCode || "")}</span></a>${place ? ` <span class="chip course">${h.esc(place)}</span>` : ""} ${h.statement(s.description)}
        ${best.length ? `<ul class="plain">${rows}</ul>` : '<p class="muted no-match">No counterpart in the other framework.</p>'}</li>`;
    }).join("") || "<li>No standards in this grade.</li>";
    h.say(`${standards.length} standards; ${pairs.length} crosswalks.`);
  }

  // ---- Coverage: grades by domains, coloured by the share covered --------------------
  // The curricula the data holds: the 400 of an unnamed one lists them. Asked once per
  // release and tab, not on every visit.
  async function loadedCurricula(h) {
    const key = `edukg-curricula:${sessionStorage.getItem("edukg-release") || ""}`;
    const known = sessionStorage.getItem(key);
    if (known) return JSON.parse(known);
    let found = [];
    try { await h.api("/courses", { curriculumId: "-" }); } catch (err) { found = (err.details && err.details.loaded) || []; }
    sessionStorage.setItem(key, JSON.stringify(found));
    return found;
  }

  async function frameworkFor(h, fws, curriculum) {
    let subject = "";
    if (curriculum) {
      const courses = await h.api("/courses", { curriculumId: curriculum, limit: 1 }).catch(() => ({ data: [] }));
      subject = (courses.data[0] || {}).academicSubject || "";
    }
    const fit = fws.filter((f) => !subject || f.academicSubject === subject);
    return ((fit.find((f) => f.jurisdiction === "Multi-State") || fit[0] || fws[0]) || {}).caseIdentifierUUID;
  }

  async function coverage(h) {
    document.title = "Curriculum coverage · edukg explorer";
    const q = new URLSearchParams(location.search);
    const { fws, html } = await frameworkOptions(h);
    const curricula = await loadedCurricula(h);
    const curriculum = q.get("curriculum") || curricula[0] || "";
    // By default, a framework of the curriculum's own subject (Common Core first), not
    // whichever framework sorts first.
    const framework = q.get("framework") || await frameworkFor(h, fws, curriculum);
    h.main.innerHTML = `<h1>Curriculum coverage</h1>
      <p class="muted">How much of a framework a curriculum covers: standards with lessons, activities or assessments aligned to them directly, or to a crosswalk counterpart (published, or derived from shared learning components).</p>
      <div class="filters">
        <label for="curriculum">Curriculum <select id="curriculum">${curricula.map((c) => `<option${c === curriculum ? " selected" : ""}>${h.esc(c)}</option>`).join("")}</select></label>
        <label for="framework">Framework <select id="framework">${html(framework)}</select></label>
      </div>
      <p id="totals"></p><div class="grid-wrap"><table id="grid" class="grid"></table></div>
      <p class="legend"><span class="swatch direct"></span> direct <span class="swatch crosswalk"></span> through a crosswalk <span class="swatch none"></span> not covered</p>
      <section id="cell" aria-live="polite"></section>`;
    const f = (sel) => h.main.querySelector(sel);
    for (const sel of ["#curriculum", "#framework"]) f(sel).onchange = () => h.navigate("/coverage", { curriculum: f("#curriculum").value, framework: f("#framework").value });
    if (!curriculum) { h.say("No curriculum is loaded."); return; }
    const summary = await h.api(`/curriculums/${encodeURIComponent(curriculum)}/coverage/summary`, { standardsFrameworkCaseIdentifierUUID: framework });
    if (summary.note) {  // no item of it is aligned in this release: a grid of zeros says nothing
      f("#totals").textContent = summary.note;  // said once, here; the status line stays short
      f("#grid").closest(".grid-wrap").hidden = true;
      h.main.querySelector(".legend").hidden = true;
      h.say("No coverage to show.");
      return;
    }
    const rows = await h.all(`/curriculums/${encodeURIComponent(curriculum)}/coverage`, { standardsFrameworkCaseIdentifierUUID: framework });
    const domains = new Map(), grades = new Set();
    for (const r of rows) {
      const d = r.domain ? r.domain.identifier : "";
      if (!domains.has(d)) domains.set(d, r.domain);
      for (const g of r.standard.gradeLevel.length ? r.standard.gradeLevel : ["—"]) grades.add(g);
    }
    const gradeList = [...grades].sort((a, b) => GRADES.indexOf(a) - GRADES.indexOf(b));
    const domainList = [...domains.entries()].sort((a, b) => h.natural(a[1] && (a[1].code || a[1].description), b[1] && (b[1].code || b[1].description)));
    const inCell = (d, g) => rows.filter((r) => (r.domain ? r.domain.identifier : "") === d && (r.standard.gradeLevel.length ? r.standard.gradeLevel : ["—"]).includes(g));
    const dname = (dom) => dom ? (dom.code || h.plainText(dom.description).slice(0, 40)) : "(no domain)";
    f("#grid").innerHTML = `<thead><tr><th scope="col">Domain</th>${gradeList.map((g) => `<th scope="col">${h.esc(g)}</th>`).join("")}</tr></thead><tbody>
      ${domainList.map(([d, dom]) => `<tr><th scope="row">${h.esc(dname(dom))}</th>${gradeList.map((g) => {
        const cell = inCell(d, g);
        if (!cell.length) return "<td></td>";
        const covered = cell.filter((r) => r.status !== "none").length, direct = cell.filter((r) => r.status === "direct").length;
        const share = covered / cell.length;
        return `<td><button class="cell" data-d="${h.esc(d)}" data-g="${h.esc(g)}" style="--share:${share.toFixed(2)}" title="${covered} of ${cell.length} covered (${direct} directly)">${pct(covered, cell.length)}%</button></td>`;
      }).join("")}</tr>`).join("")}</tbody>`;
    const total = rows.length, covered = rows.filter((r) => r.status !== "none").length;
    f("#totals").textContent = `${covered} of ${total} standards covered (${pct(covered, total)}%): ${rows.filter((r) => r.status === "direct").length} directly, ${rows.filter((r) => r.status === "crosswalk").length} through crosswalks.`;
    f("#grid").addEventListener("click", (ev) => {
      const b = ev.target.closest("button.cell");
      if (!b) return;
      const cell = inCell(b.dataset.d, b.dataset.g).sort((a, c) => h.natural(a.standard.statementCode, c.standard.statementCode));
      const content = (list) => list.map((c) => `${h.esc(c.type)} ${h.esc(c.name || c.identifier)}`).join("; ");
      f("#cell").innerHTML = `<h2>${h.esc(dname(domains.get(b.dataset.d)))}, grade ${h.esc(b.dataset.g)}</h2><ul class="plain fw-list">${cell.map((r) => `<li><span class="chip status-${h.esc(r.status)}">${h.esc(r.status)}</span>
        <a href="${h.href(`/standards/${h.esc(r.standard.caseIdentifierUUID)}`)}"><span class="code">${h.esc(r.standard.statementCode || "")}</span></a> ${h.statement(r.standard.description)}
        ${r.direct.length ? `<p class="muted">${content(r.direct)}</p>` : ""}
        ${r.viaCrosswalk.map((v) => `<p class="muted">via <span class="code">${h.esc(v.standard.statementCode || "")}</span> (${h.esc(v.method)}, Jaccard ${(v.jaccard ?? 0).toFixed(2)}): ${content(v.aligned)}</p>`).join("")}</li>`).join("")}</ul>`;
    });
    h.say(`${total} standards of ${curriculum}'s coverage.`);
  }


  // ---- Align a text: the standards a pasted text addresses, with its evidence -----------
  async function jurisdictions(h) {
    const fws = await h.all("/standards-frameworks", {});
    return [...new Set(fws.map((f) => f.jurisdiction).filter(Boolean))].sort(h.natural);
  }

  // Evidence this alike or more is highlighted as strong; weaker evidence is marked faintly
  // (the floor at which a passage addresses a learning component, docs/api.md).
  const STRONG = 0.35;
  function marked(h, text, passages) {  // the text, with the given passages highlighted
    let out = "", at = 0;
    for (const p of [...passages].sort((a, b) => a.start - b.start)) {
      if (p.start < at) continue;
      const weak = (p.similarity ?? 1) < STRONG;
      out += h.esc(text.slice(at, p.start)) + `<mark class="${weak ? "weak" : "strong"}" title="similarity ${(p.similarity ?? 0).toFixed(2)}">${h.esc(text.slice(p.start, p.end))}</mark>`;
      at = p.end;
    }
    return out + h.esc(text.slice(at));
  }

  // The bands of docs/api.md ("Aligning a text"): what share of first results in each
  // were a standard the problem's publisher tagged, measured by bench/align_eval.py.
  const CONFIDENCE = [["high", "score 0.6 or more, about 2 in 3 right"], ["medium", "0.4 to 0.6, about 1 in 2"],
    ["low", "0.2 to 0.4, about 2 in 5"], ["very low", "below 0.2, about 1 in 7"]];
  const pathOf = (h, place) => place.path.filter((s) => s.statementType !== "Grade Level").map((s) => h.esc(s.statementCode || h.plainText(s.description).slice(0, 40))).join(" › ");

  async function alignText(h) {
    document.title = "Align a text · edukg explorer";
    const places = await jurisdictions(h);
    h.main.innerHTML = `<h1>Align a text</h1>
      <p class="muted">Paste a lesson, an item or an activity: its sentences are matched by meaning and by words against the standards, the learning components that make them up and the domains they lie in. Scores are calibrated on real problems tagged by their publishers: ${CONFIDENCE.map(([name, about]) => `<span class="chip conf-${name.replace(" ", "-")}">${name}</span> ${about}`).join("; ")}.</p>
      <form id="align-form" class="filters">
        <label for="align-text" class="wide">Text <textarea id="align-text" rows="8" maxlength="20000" required></textarea></label>
        <label for="align-where">Jurisdiction <select id="align-where">${places.map((j) => `<option${j === "Multi-State" ? " selected" : ""}>${h.esc(j)}</option>`).join("")}</select></label>
        <label for="align-grade">Grade <select id="align-grade">${gradeOptions(h, "")}</select></label>
        <button type="submit">Align</button>
      </form>
      <section aria-labelledby="aligned-h"><h2 id="aligned-h">Standards</h2><p id="align-note" class="muted" aria-live="polite"></p>
        <div class="align-results"><div id="align-shown" class="statement text-shown"></div><ol class="plain fw-list" id="aligned"></ol></div></section>`;
    const f = (sel) => h.main.querySelector(sel);
    f("#align-form").onsubmit = async (ev) => {
      ev.preventDefault();
      const text = f("#align-text").value;
      const body = { text, jurisdiction: f("#align-where").value, limit: 10 };
      if (f("#align-grade").value) body.gradeLevel = [f("#align-grade").value];
      h.say("Aligning…");
      let found;
      try { found = await h.post("/alignments", body); } catch (err) { h.say(h.explain(err), true); return; }
      const show = (n, asked = false) => {
        const r = found.data[n];
        f("#align-shown").innerHTML = r ? marked(h, text, r.evidence.passages) : h.esc(text);
        h.main.querySelectorAll("#aligned > li").forEach((li, i) => li.classList.toggle("chosen", i === n));
        if (asked) f("#align-shown").scrollIntoView({ block: "nearest" });  // on a phone it lies above
      };
      f("#aligned").innerHTML = found.data.map((r, n) => `<li data-n="${n}"><button type="button" class="show-evidence" data-n="${n}">Show</button>
        <a href="${h.href(`/standards/${h.esc(r.caseIdentifierUUID)}`)}"><span class="code">${h.esc(r.statementCode || "standard")}</span></a> ${bar(h, r.score)} <span class="chip conf-${h.esc(r.confidence.replace(" ", "-"))}">${h.esc(r.confidence)}</span>
        <a class="check-link" data-text-key="${n}" href="${h.href(`/check?standard=${encodeURIComponent(r.caseIdentifierUUID)}`)}">Check against this standard</a>
        ${r.domain ? `<span class="muted">${h.esc(r.domain.code || "")} ${h.esc(r.domain.description || "")}</span>` : ""}
        <p>${h.statement(r.description)}</p>
        ${r.placements.length > 1 ? `<p class="muted places">Stands in ${r.placements.length} places: ${r.placements.map((pl) => `<a href="${h.href(`/standards/${h.esc(pl.caseIdentifierUUID)}`)}">${pathOf(h, pl) || h.esc(pl.identifier)}</a>`).join("; ")}</p>` : ""}
        <details class="evidence-box"${n === 0 ? " open" : ""}><summary>Evidence: ${r.evidence.passages.length} passages</summary><ul class="evidence">${r.evidence.passages.map((p) => `<li><q>${h.esc(p.text)}</q> <span class="muted">(${p.similarity.toFixed(2)}${p.similarity < STRONG ? ", weak" : ""})</span>
          ${p.words.length ? `<span class="muted">words: ${p.words.map((w) => h.esc(w)).join(", ")}</span>` : ""}
          ${p.learningComponents.length ? `<ul>${p.learningComponents.map((c) => `<li class="lc">${h.statement(c.description)} <span class="muted">${c.similarity.toFixed(2)}</span></li>`).join("")}</ul>` : ""}</li>`).join("")}</ul></details></li>`).join("") || `<li>${h.esc(found.note || "No standard matched this text closely enough.")}</li>`;
      f("#aligned").onclick = (e) => {
        const b = e.target.closest("button.show-evidence"); if (b) show(Number(b.dataset.n), true);
        if (e.target.closest("a.check-link")) sessionStorage.setItem(CHECK_TEXT, text);  // the check page's text
      };
      const count = found.data.length ? `${plural(found.data.length, "standard")}, ranked` : "Ranked";
      f("#align-note").textContent = found.ranking === "semantic" ? `${count} by meaning; ${plural(found.passages, "passage")}.` : `${count} by words only: the server has no semantic index (edukg index).`;
      show(0);
      h.say("");  // the list says what was found (and the note why nothing was)
    };
  }

  // ---- Check a text against one standard, component by component ---------------------
  const CHECK_TEXT = "edukg-check-text";  // the text the Align page hands to a check
  function checkResult(h, text, r) {
    const verdict = r.aligned ? "Aligned" : "Not aligned";
    // The verdict, then the text with its evidence marked beside the components (on a
    // phone, the text first: it is what the components' passages point into).
    return `<p><strong>${verdict}</strong> ${bar(h, r.score)} <span class="chip conf-${h.esc(r.confidence.replace(" ", "-"))}">${h.esc(r.confidence)}</span>
      ${r.alignedCount} of ${r.totalCount} learning components addressed${r.componentsFrom === "crosswalk" ? " (the components of its published crosswalk counterparts)" : ""}.</p>
      ${r.note ? `<p class="muted">${h.esc(r.note)}</p>` : ""}
      ${r.rank ? `<p class="muted">Ranks ${r.rank.position} of ${r.rank.of} standards for this text${r.rank.better.length ? `; fitting better: ${r.rank.better.slice(0, 5).map((c) => `<span class="code">${h.esc(c)}</span>`).join(" ")}` : ""}.</p>` : ""}
      <div class="align-results"><div class="statement text-shown check-shown">${marked(h, text, r.learningComponents.flatMap((c) => c.passages))}</div>
      <ul class="plain fw-list check-components">${r.learningComponents.map((c) => `<li><span class="chip ${c.addressed ? "conf-high" : "conf-very-low"}">${c.addressed ? "addressed" : "not addressed"}</span> ${c.description ? h.statement(c.description) : h.esc(c.identifier)} <span class="muted">(${c.score.toFixed(2)})</span>
        ${c.passages.length ? `<ul class="evidence">${c.passages.map((p) => `<li><q>${h.esc(p.text)}</q> <span class="muted">(${p.similarity.toFixed(2)})</span></li>`).join("")}</ul>` : ""}</li>`).join("")}</ul></div>`;
  }

  // The form and its result; `heading`: the section's own (on a standard's page; the
  // check page's h1 already says it).
  function checkForm(h, box, uuid, text, heading) {
    box.innerHTML = `${heading ? '<h2 id="check-h">Check a text against this standard</h2>' : ""}
      <form class="filters check-form"><label class="wide">Text <textarea class="check-text" rows="6" maxlength="20000" required placeholder="Paste a lesson, an item or an activity"></textarea></label>
      <button type="submit">Check</button></form><div class="check-result" aria-live="polite"></div>`;
    const area = box.querySelector(".check-text");
    area.value = text || "";
    box.querySelector("form").onsubmit = async (ev) => {
      ev.preventDefault();
      h.say("Checking…");
      try {
        const r = await h.post("/alignments/check", { text: area.value, caseIdentifierUUID: uuid });
        box.querySelector(".check-result").innerHTML = checkResult(h, area.value, r);
        h.say("");  // the verdict is in the result (a live region), not above the page
      } catch (err) { h.say(h.explain(err), true); }
    };
    return box.querySelector("form");
  }

  async function checkPage(h) {
    document.title = "Check a text · edukg explorer";
    const uuid = new URLSearchParams(location.search).get("standard") || "";
    if (!/^[0-9a-fA-F-]{36}$/.test(uuid)) {
      h.main.innerHTML = `<h1>Check a text</h1><p>Open a standard's page, or align a text first, and choose "Check against this standard".</p>`;
      h.say("No standard chosen.");
      return;
    }
    const s = await h.api(`/academic-standards/${uuid}`);
    document.title = `Check a text against ${s.statementCode || "a standard"} · edukg explorer`;
    // Where the standard is from: codes repeat across jurisdictions (7.EE.B.3 in several).
    h.main.innerHTML = `<h1>Check a text against <a href="${h.href(`/standards/${h.esc(uuid)}`)}"><span class="code">${h.esc(s.statementCode || "a standard")}</span></a><span class="where">(${h.esc(s.jurisdiction)})</span></h1>
      <p class="muted">${h.esc(s.academicSubject || "")}${(s.gradeLevel || []).length ? `, grade${s.gradeLevel.length > 1 ? "s" : ""} ${h.esc(s.gradeLevel.join(", "))}` : ""}</p>
      <p class="statement">${h.statement(s.description)}</p><section class="check-box" aria-label="Check"></section>`;
    const text = sessionStorage.getItem(CHECK_TEXT);
    const form = checkForm(h, h.main.querySelector(".check-box"), uuid, text, false);
    h.say("");
    if (text) form.requestSubmit();
  }
  (window.edukgStandardParts = window.edukgStandardParts || []).push((h, s, box) => {
    const part = document.createElement("section");
    box.after(part);
    checkForm(h, part, s.caseIdentifierUUID, "", true);
    return Promise.resolve();
  });

  // ---- On a standard's page: similar standards in another jurisdiction ------------------
  async function similarPart(h, standard, box) {
    const places = (await jurisdictions(h)).filter((j) => j !== standard.jurisdiction);
    if (!places.length) return;
    const pick = places.includes("Multi-State") ? "Multi-State" : places[0];
    box.innerHTML = `<h2><label for="similar-where">Similar standards in <select id="similar-where">${places.map((j) => `<option${j === pick ? " selected" : ""}>${h.esc(j)}</option>`).join("")}</select></label></h2><ul class="plain fw-list" id="similar"></ul>`;
    const list = box.querySelector("#similar");
    const load = async () => {
      const found = await h.api(`/academic-standards/${standard.caseIdentifierUUID}/similar`, { jurisdiction: box.querySelector("#similar-where").value });
      list.innerHTML = found.data.map((r) => `<li><a href="${h.href(`/standards/${h.esc(r.caseIdentifierUUID)}`)}"><span class="code">${h.esc(r.statementCode || "standard")}</span></a> ${bar(h, r.score)}
        ${r.sharedLearningComponents ? `<span class="chip">${r.sharedLearningComponents.sharedLCCount} shared learning components</span>` : ""} <p>${h.statement(r.description)}</p></li>`).join("") || '<li class="muted">No similar standard there.</li>';
    };
    box.querySelector("#similar-where").onchange = () => load().catch((err) => h.say(h.explain(err), true));
    await load();
  }
  (window.edukgStandardParts = window.edukgStandardParts || []).push((h, s, box) => similarPart(h, s, box).catch(() => {}));

  views.push({ pattern: /^\/compare\/?$/, view: compare }, { pattern: /^\/coverage\/?$/, view: coverage },
    { pattern: /^\/align\/?$/, view: alignText }, { pattern: /^\/check\/?$/, view: checkPage });
})();
