// edukg explorer: a plain page over the public API, with the user's own key.
// The key lives in this tab's session storage only: never in a URL or a cookie.
(() => {
  "use strict";
  const API = document.querySelector('meta[name="edukg-api"]').content;
  const ROOT = new URL(document.querySelector(".brand").href).pathname.replace(/\/$/, "");
  const main = document.getElementById("main");
  const statusBox = document.getElementById("status");
  const keyInput = document.getElementById("key");
  const KEY = "edukg-key";
  const RELEASE = "edukg-release";  // the release this tab reads ("" or absent: the current one)
  const releasePick = document.getElementById("release");

  // ---- small helpers ---------------------------------------------------------------
  // "Component (a Standard)"; the normalized type only where it says something more.
  const typeOf = (s) => {
    const own = s.statementType, normal = s.normalizedStatementType;
    if (!own) return normal || "—";
    return !normal || normal === own ? own : `${own} (a ${normal})`;
  };
  const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;",
    ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  const el = (html) => { const t = document.createElement("template"); t.innerHTML = html.trim(); return t.content.firstElementChild; };
  const say = (text, isError = false) => { statusBox.textContent = text; statusBox.classList.toggle("error", isError); };
  const natural = (a, b) => String(a ?? "").localeCompare(String(b ?? ""), undefined, { numeric: true });

  class Problem extends Error {
    constructor(status, message, retryAfter, details) { super(message); this.status = status; this.retryAfter = retryAfter; this.details = details; }
  }

  function explain(err) {
    if (!(err instanceof Problem)) return `The request failed: ${err.message}. Check that the server is running.`;
    switch (err.status) {
      case 401: return "The API did not accept your key. Enter a valid key above (an administrator makes one with: edukg keys create NAME).";
      case 404: return `Not found. ${err.message}`;
      case 429: return `Too many requests for this key. Wait ${err.retryAfter || "a few"} seconds, then try again.`;
      case 503: return "The server has no data loaded, or cannot reach its database. Try again shortly.";
      default: return `Something went wrong (${err.status}): ${err.message}`;
    }
  }

  async function api(path, params = {}) {
    const key = sessionStorage.getItem(KEY);
    if (!key) throw new Problem(401, "No key entered.");
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) {
      for (const one of Array.isArray(v) ? v : [v]) if (one !== undefined && one !== null && one !== "") query.append(k, one);
    }
    return send(API + path + (query.toString() ? `?${query}` : ""), key, {});
  }

  async function post(path, json) {  // the one operation with a body (POST /alignments)
    const key = sessionStorage.getItem(KEY);
    if (!key) throw new Problem(401, "No key entered.");
    return send(API + path, key, { method: "POST", body: JSON.stringify(json), contentType: "application/json" });
  }

  async function send(url, key, { method = "GET", body, contentType }) {
    const headers = { "x-api-key": key };
    if (contentType) headers["content-type"] = contentType;
    const release = sessionStorage.getItem(RELEASE);
    if (release) headers["x-data-version"] = release;
    const response = await fetch(url, { method, headers, body });
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) throw new Problem(response.status, answer.message || response.statusText, response.headers.get("retry-after"), answer.details);
    return answer;
  }

  async function all(path, params = {}) {  // follow nextCursor to the end
    let out = [], cursor = null;
    for (let i = 0; i < 200; i++) {
      // 250: a page of that size is cheap work, which the pool does not queue per key
      const page = await api(path, { ...params, limit: 250, cursor });
      out = out.concat(page.data);
      if (!page.pagination.hasMore) return out;
      cursor = page.pagination.nextCursor;
    }
    return out;
  }

  // ---- the release picker: every loaded release, the current one by default ----------
  async function loadReleases() {
    if (!sessionStorage.getItem(KEY)) return;
    let releases;
    try {
      const chosen = sessionStorage.getItem(RELEASE) || "";
      sessionStorage.removeItem(RELEASE);  // list them from the current release
      releases = await all("/data-versions");
      if (releases.some((r) => r.dataVersion === chosen)) sessionStorage.setItem(RELEASE, chosen);
    } catch (err) {
      return;  // the page itself says what is wrong
    }
    const current = releases.find((r) => r.current);
    releasePick.innerHTML = `<option value="">current${current ? ` (${esc(current.dataVersion)})` : ""}</option>` +
      releases.map((r) => `<option value="${esc(r.dataVersion)}">${esc(r.dataVersion)}${r.current ? " (current)" : ""} · loaded ${esc(r.loadedAt.slice(0, 10))}</option>`).join("");
    releasePick.value = sessionStorage.getItem(RELEASE) || "";
    releasePick.parentElement.hidden = releases.length < 2;  // a choice only when there is one
  }

  // Statements: formulas typeset, emphasis, plain words for labels (explore-notation.js).
  const { statement, plainText } = window.edukgNotation;

  // Three grades or more are a span (high school: one "Grades 9–12", not four chips).
  const grades = (g) => (g || []).length > 2 ? `<span class="chip">Grades ${esc(g[0])}–${esc(g[g.length - 1])}</span>`
    : (g || []).map((x) => `<span class="chip">Grade ${esc(x)}</span>`).join("");
  const link = (path) => `${ROOT}${path}`;
  // For an attribute: every value escaped (record values included), whatever it holds.
  const href = (path) => esc(link(path));
  // Only web addresses become links (a record's `javascript:` URL stays text).
  const webUrl = (u) => (/^https?:\/\//i.test(String(u ?? "")) ? String(u) : null);

  // ---- views -------------------------------------------------------------------------
  async function home() {
    document.title = "edukg explorer";
    main.innerHTML = `<h1>Browse standards frameworks</h1>
      <div class="filters">
        <label for="jur">Jurisdiction <select id="jur"><option value="">All</option></select></label>
        <label for="subj">Subject <select id="subj"><option value="">All</option></select></label>
      </div>
      <ul class="plain fw-list" id="fws" aria-label="Frameworks"></ul>`;
    const frameworks = await all("/standards-frameworks");
    const jur = main.querySelector("#jur"), subj = main.querySelector("#subj"), list = main.querySelector("#fws");
    for (const [select, field] of [[jur, "jurisdiction"], [subj, "academicSubject"]]) {
      for (const v of [...new Set(frameworks.map((f) => f[field]).filter(Boolean))].sort()) select.append(new Option(v, v));
    }
    const draw = () => {
      const shown = frameworks.filter((f) => (!jur.value || f.jurisdiction === jur.value) && (!subj.value || f.academicSubject === subj.value));
      list.innerHTML = shown.map((f) => `<li><a href="${href(`/frameworks/${f.caseIdentifierUUID}`)}">${esc(f.name)}</a>
        <span class="chip">${esc(f.jurisdiction)}</span><span class="chip">${esc(f.academicSubject)}</span>
        <span class="muted">${esc(f.adoptionStatus || "")}</span></li>`).join("") || "<li>No framework matches these filters.</li>";
    };
    jur.onchange = subj.onchange = draw;
    draw();
    say(`${frameworks.length} frameworks.`);
  }

  function nodeItem(item) {
    const li = el(`<li><div class="node">
      ${item.hasChildren ? `<button class="toggle" aria-expanded="false" aria-label="Show children of ${esc(item.statementCode || "this item")}">+</button>` : '<span class="toggle" aria-hidden="true"></span>'}
      <span class="text">${item.statementCode ? `<span class="code">${esc(item.statementCode)}</span>` : ""}${grades(item.gradeLevel)}
        <a href="${href(`/standards/${item.caseIdentifierUUID}`)}">${statement(item.description || "(no statement)")}</a></span>
    </div></li>`);
    const toggle = li.querySelector("button.toggle");
    if (toggle) {
      toggle.addEventListener("click", async () => {
        const open = toggle.getAttribute("aria-expanded") === "true";
        const existing = li.querySelector(":scope > ul");
        if (open) { toggle.setAttribute("aria-expanded", "false"); toggle.textContent = "+"; if (existing) existing.hidden = true; return; }
        toggle.setAttribute("aria-expanded", "true"); toggle.textContent = "−";
        if (existing) { existing.hidden = false; return; }
        try {
          const kids = (await all(`/academic-standards/${item.caseIdentifierUUID}/children`)).sort((a, b) => natural(a.statementCode, b.statementCode));
          const ul = document.createElement("ul");
          kids.forEach((k) => ul.append(nodeItem(k)));
          li.append(ul);
        } catch (err) { say(explain(err), true); }
      });
    }
    return li;
  }


  async function framework(uuid) {
    const frameworks = await all("/standards-frameworks", { includeNonCurrent: "true" });
    const fw = frameworks.find((f) => f.caseIdentifierUUID === uuid);
    if (!fw) throw new Problem(404, "No framework with that identifier is loaded.");
    document.title = `${fw.name} · edukg explorer`;
    main.innerHTML = `<nav class="crumbs" aria-label="Breadcrumbs"><ol><li><a href="${href("/")}">Frameworks</a></li><li>${esc(fw.name)}</li></ol></nav>
      <h1>${esc(fw.name)}</h1>
      <p><span class="chip">${esc(fw.jurisdiction)}</span><span class="chip">${esc(fw.academicSubject)}</span></p>
      <p class="actions"><a href="${href(`/compare?source=${encodeURIComponent(uuid)}`)}">Compare with another framework</a>
        · <a href="${href(`/coverage?framework=${encodeURIComponent(uuid)}`)}">Curriculum coverage</a></p>
      <form class="search" role="search" id="find">
        <label for="q" class="muted">Find in this framework, by code (e.g. 3.NF.A.1) or words</label>
        <input id="q" name="q" type="search" placeholder="code or words">
        <button class="primary" type="submit">Find</button>
      </form>
      <section aria-labelledby="found-h" id="found" hidden><h2 id="found-h">Results</h2><ul class="plain fw-list" id="results"></ul></section>
      <section aria-labelledby="tree-h"><h2 id="tree-h">Hierarchy</h2><div class="tree"><ul id="tree"></ul></div></section>`;
    const top = (await all(`/academic-standards/${uuid}/children`)).sort((a, b) => natural(a.statementCode, b.statementCode));
    const tree = main.querySelector("#tree");
    top.forEach((item) => tree.append(nodeItem(item)));
    main.querySelector("#find").addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const q = main.querySelector("#q").value.trim();
      if (!q) return;
      say("Searching…");
      try {
        // The server's search, within this framework: words by stem and meaning, a code
        // with the items under it (3.NF.A: 3.NF.A.1, 3.NF.A.2, ...).
        const hits = await api("/academic-standards/search", { query: q, standardsFrameworkCaseIdentifierUUID: uuid, limit: 50 });
        main.querySelector("#found").hidden = false;
        main.querySelector("#results").innerHTML = hits.slice(0, 50).map((s) => `<li>${s.statementCode ? `<span class="code">${esc(s.statementCode)}</span>` : ""}
          <a href="${href(`/standards/${s.caseIdentifierUUID}`)}">${statement(s.description)}</a></li>`).join("") || "<li>Nothing matched.</li>";
        say(hits.length >= 50 ? "The 50 best matches are shown." : `${hits.length} match${hits.length === 1 ? "" : "es"}.`);
      } catch (err) { say(explain(err), true); }
    });
    say(`${top.length} top-level items. Expand a row to see its children.`);
  }

  // A statement cut at a word, within `n` characters (the box's width), marked when cut.
  const clip = (text, n) => {
    const plain = String(text).replace(/\s+/g, " ").trim();
    if (plain.length <= n) return plain;
    const cut = plain.slice(0, n - 1);
    return `${cut.slice(0, Math.max(cut.lastIndexOf(" "), n / 2))}…`;
  };

  function progressionSvg(center, before, after) {
    const W = 720, rowH = 54, boxW = 200, boxH = 44;
    const rows = Math.max(before.length, after.length, 1);
    const H = rows * rowH + 20;
    const cy = H / 2;
    const box = (s, x, y, cls) => `<a class="${cls}" href="${href(`/standards/${s.caseIdentifierUUID}`)}" aria-label="${esc(s.statementCode || "standard")}: ${esc(plainText(s.description).slice(0, 80))}">
      <title>${esc((s.statementCode || "") + " " + plainText(s.description))}</title>
      <rect x="${x}" y="${y - boxH / 2}" width="${boxW}" height="${boxH}" rx="6"></rect>
      <text x="${x + 8}" y="${y - 5}"><tspan class="code">${esc(s.statementCode || "")}</tspan></text>
      <text x="${x + 8}" y="${y + 13}">${esc(clip(plainText(s.description), 32))}</text></a>`;
    const col = (list, x) => list.map((s, n) => ({ s, x, y: (H - list.length * rowH) / 2 + n * rowH + rowH / 2 }));
    const left = col(before, 10), right = col(after, W - boxW - 10);
    const mid = (W - boxW) / 2;
    const lines = [...left.map((p) => `<line x1="${p.x + boxW}" y1="${p.y}" x2="${mid - 4}" y2="${cy}"></line>`),
      ...right.map((p) => `<line x1="${mid + boxW}" y1="${cy}" x2="${p.x - 4}" y2="${p.y}"></line>`)].join("");
    return `<svg viewBox="0 0 ${W} ${H}" role="group" aria-label="Learning progression: prerequisites on the left, this standard in the middle, what it builds towards on the right">
      <defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#6b7280"></path></marker></defs>
      ${lines}${left.map((p) => box(p.s, p.x, p.y, "before")).join("")}${box(center, mid, cy, "center")}${right.map((p) => box(p.s, p.x, p.y, "after")).join("")}</svg>`;
  }

  async function standardPage(uuid) {
    const s = await api(`/academic-standards/${uuid}`);
    const [chain, kids, lcs, xw, before, after, lessons] = await Promise.all([
      api(`/academic-standards/${uuid}/ancestors`).then((r) => r.data),
      s.hasChildren ? all(`/academic-standards/${uuid}/children`) : [],
      all(`/academic-standards/${uuid}/learning-components`),
      all(`/academic-standards/${uuid}/crosswalks`),
      all(`/academic-standards/${uuid}/prerequisites`),
      all(`/academic-standards/${uuid}/builds-towards`),
      all(`/academic-standards/${uuid}/lessons`).catch(() => []),
    ]);
    document.title = `${s.statementCode || "Standard"} · edukg explorer`;
    const crumbs = chain.map((c, n) => n === 0
      ? `<li><a href="${href(`/frameworks/${c.caseIdentifierUUID}`)}">${esc(c.name)}</a></li>`
      : `<li><a href="${href(`/standards/${c.caseIdentifierUUID}`)}">${esc(c.statementCode || plainText(c.description).slice(0, 30))}</a></li>`).join("");
    kids.sort((a, b) => natural(a.statementCode, b.statementCode));
    main.innerHTML = `<nav class="crumbs" aria-label="Breadcrumbs"><ol><li><a href="${href("/")}">Frameworks</a></li>${crumbs}</ol></nav>
      <h1>${s.statementCode ? `<span class="code">${esc(s.statementCode)}</span>` : ""}${esc(s.jurisdiction)} ${esc(s.academicSubject)}</h1>
      <p class="statement">${statement(s.description)}</p>
      ${s.notes ? `<p class="muted">${statement(s.notes)}</p>` : ""}
      <dl class="facts">
        <dt>Code</dt><dd>${esc(s.statementCode || "—")}</dd>
        <dt>Grades</dt><dd>${grades(s.gradeLevel) || "—"}</dd>
        <dt>Type</dt><dd>${esc(typeOf(s))}</dd>
        <dt>Jurisdiction</dt><dd>${esc(s.jurisdiction)}</dd>
        <dt>Attribution</dt><dd>${esc(s.attributionStatement)}</dd>
        <dt>License</dt><dd>${webUrl(s.license) ? `<a href="${esc(webUrl(s.license))}" rel="noopener">${esc(s.license)}</a>` : esc(s.license || "—")}</dd>
        <dt>Last changed</dt><dd id="last-changed">…</dd>
      </dl>
      <h2 id="prog-h">Learning progression</h2>
      ${before.length || after.length ? `<div class="graph">${progressionSvg(s, before, after)}</div>` : '<p class="muted">No progression links for this standard.</p>'}
      <h2>Children</h2>
      ${kids.length ? `<ul class="plain fw-list">${kids.map((k) => `<li><span class="code">${esc(k.statementCode || "")}</span><a href="${href(`/standards/${k.caseIdentifierUUID}`)}">${statement(k.description)}</a></li>`).join("")}</ul>` : '<p class="muted">None.</p>'}
      <h2>Learning components</h2>
      ${lcs.length ? `<ul>${lcs.map((c) => `<li>${statement(c.description)}</li>`).join("")}</ul>` : '<p class="muted">None in the data.</p>'}
      <h2>Crosswalks</h2>
      ${xw.length ? `<table><thead><tr><th scope="col">Standard</th><th scope="col">Jurisdiction</th><th scope="col">Jaccard</th><th scope="col">Learning components (state / CCSS / shared)</th></tr></thead><tbody>
        ${xw.map((x) => `<tr><td><a href="${href(`/standards/${x.caseIdentifierUUID}`)}">${esc(x.statementCode || "standard")}</a></td><td>${esc(x.jurisdiction)}</td>
        <td><span class="bar-wrap" aria-hidden="true"><span class="bar" style="width:${Math.round((x.jaccard || 0) * 100)}%"></span></span>${(x.jaccard ?? 0).toFixed(2)}</td>
        <td>${x.stateLCCount} / ${x.ccssLCCount} / ${x.sharedLCCount}</td></tr>`).join("")}</tbody></table>` : '<p class="muted">None.</p>'}
      <h2>Aligned lessons</h2>
      ${lessons.length ? `<ul>${lessons.map((l) => `<li>${esc(l.name)} <span class="muted">${esc(l.ordinalName || "")} · ${esc(l.courseCode || "")} · ${esc((l.curriculumAlignmentType || []).join(", "))}</span></li>`).join("")}</ul>` : '<p class="muted">None in the data.</p>'}
      <div id="standard-parts"></div>`;
    say("");
    for (const part of window.edukgStandardParts || []) part(helpers, s, main.querySelector("#standard-parts"));
    lastChanged(s).catch(() => { main.querySelector("#last-changed").textContent = "—"; });
  }

  // The release in which a record last changed, among the loaded ones up to the one shown.
  async function lastChanged(record) {
    const box = main.querySelector("#last-changed");
    const releases = await all("/data-versions");
    const shown = sessionStorage.getItem(RELEASE) || (releases.find((r) => r.current) || {}).dataVersion;
    for (let i = releases.findIndex((r) => r.dataVersion === shown); i > 0; i--) {
      const from = releases[i - 1].dataVersion, to = releases[i].dataVersion;
      try {
        const page = await api("/changes", { from, to, identifier: record.identifier, limit: 1 });
        if (page.data.length) {
          const c = page.data[0];
          box.innerHTML = `${esc(c.change === "added" ? "Added" : "Changed")} in release <a href="${href("/changes")}?${new URLSearchParams({ from, to })}">${esc(to)}</a>${c.changedProperties.length ? ` (${esc(c.changedProperties.join(", "))})` : ""}`;
          return;
        }
      } catch (err) {
        if (err instanceof Problem && err.status === 503) { box.textContent = `Not known yet: the changes up to ${to} are being computed.`; return; }
        throw err;
      }
    }
    box.textContent = releases.length > 1 ? `Unchanged in the loaded releases up to ${shown}.` : "Only one release is loaded.";
  }

  // ---- what changed between two releases ---------------------------------------------
  let routed = 0;  // counts route() calls: a view whose route was overtaken stops drawing

  async function changesPage() {
    document.title = "What changed · edukg explorer";
    const mine = routed;
    const releases = await all("/data-versions");
    if (mine !== routed) return;
    if (releases.length < 2) {
      main.innerHTML = '<h1>What changed</h1><p>Only one release is loaded here: there is nothing to compare.</p>';
      say("");
      return;
    }
    const q = new URLSearchParams(location.search), names = releases.map((r) => r.dataVersion);
    const current = Math.max(1, releases.findIndex((r) => r.current));
    const to = names.includes(q.get("to")) ? q.get("to") : names[current];
    const from = names.includes(q.get("from")) ? q.get("from") : names[Math.max(0, names.indexOf(to) - 1)];
    const label = q.get("label") || "", change = q.get("change") || "";
    const options = (chosen) => names.map((v) => `<option${v === chosen ? " selected" : ""}>${esc(v)}</option>`).join("");
    main.innerHTML = `<h1>What changed</h1>
      <div class="filters">
        <label for="from">From <select id="from">${options(from)}</select></label>
        <label for="to">To <select id="to">${options(to)}</select></label>
        <label for="label">Label <select id="label"><option value="">All</option></select></label>
        <label for="change">Change <select id="change"><option value="">All</option><option>added</option><option>removed</option><option>modified</option></select></label>
      </div>
      <table id="counts"><thead><tr><th scope="col">Label</th><th scope="col">Added</th><th scope="col">Removed</th><th scope="col">Modified</th></tr></thead><tbody></tbody></table>
      ${CHANGE_KINDS.filter((k) => !change || k === change).map((k) => `<section class="changes" id="${k}">
        <h2>${CHANGE_TITLES[k]}</h2><ul class="plain fw-list" aria-label="${CHANGE_TITLES[k]} records"></ul>
        <button type="button" class="more" hidden>More</button></section>`).join("")}`;
    const f = (sel) => main.querySelector(sel);
    const go = () => {
      const next = new URLSearchParams({ from: f("#from").value, to: f("#to").value });
      if (f("#label").value) next.set("label", f("#label").value);
      if (f("#change").value) next.set("change", f("#change").value);
      history.pushState(null, "", `${link("/changes")}?${next}`);
      route();
    };
    let summary;
    try {
      summary = await api("/changes/summary", { from, to });
      if (mine !== routed) return;
    } catch (err) {
      if (!(err instanceof Problem && err.status === 503)) throw err;
      const wait = Number(err.retryAfter) || 5;
      say(`The changes from ${from} to ${to} are being computed; this page looks again in ${wait} seconds.`);
      setTimeout(() => { if (location.pathname.endsWith("/changes")) route(); }, wait * 1000);
      return;
    }
    for (const c of summary.counts) f("#label").append(new Option(c.label, c.label));
    f("#label").value = label;
    f("#change").value = change;
    for (const sel of ["#from", "#to", "#label", "#change"]) f(sel).onchange = go;
    f("#counts tbody").innerHTML = summary.counts.map((c) => `<tr><th scope="row">${esc(c.label)}</th><td>${c.added}</td><td>${c.removed}</td><td>${c.modified}</td></tr>`).join("")
      || '<tr><td colspan="4">No record changed.</td></tr>';
    // One section per kind of change, each paged on its own; a modified record shows its
    // old and new values side by side.
    let shown = 0;
    const sections = [...main.querySelectorAll("section.changes")];
    const more = async (section, cursor) => {
      const kind = section.id, button = section.querySelector(".more");
      const page = await api("/changes", { from, to, label, change: kind, limit: 100, cursor,
                                           includeValues: kind === "modified" });
      if (mine !== routed) return;
      page.data.forEach((c) => section.querySelector("ul").append(changeItem(c, c.change === "removed" ? from : to)));
      shown += page.data.length;
      button.hidden = !page.pagination.hasMore;
      button.onclick = () => more(section, page.pagination.nextCursor).catch((err) => say(explain(err), true));
      if (!page.data.length) section.querySelector("ul").append(el('<li class="muted">None.</li>'));
    };
    await Promise.all(sections.map((section) => more(section, null)));
    if (mine === routed) say(`${shown} changed records shown, from ${from} to ${to}.`);
  }

  const CHANGE_KINDS = ["added", "removed", "modified"];
  const CHANGE_TITLES = { added: "Added", removed: "Removed", modified: "Modified" };

  function changeItem(c, release) {  // linked to its page in the release where it exists
    const page = !c.caseIdentifierUUID ? null
      : c.label === "StandardsFramework" ? `/frameworks/${c.caseIdentifierUUID}`
      : c.label === "StandardsFrameworkItem" ? `/standards/${c.caseIdentifierUUID}` : null;
    const shown = c.type === "node" ? named(c.statementCode, c.name, c.identifier)
      : `${named(c.sourceCode, c.sourceName, c.sourceIdentifier, 70)} → ${named(c.targetCode, c.targetName, c.targetIdentifier, 70)}`;
    const title = page ? `<a href="${href(page)}?release=${encodeURIComponent(release)}">${shown}</a>` : shown;
    const item = el(`<li><span class="chip">${esc(c.label)}</span> ${title}</li>`);
    if (c.change === "modified") item.append(valuesTable(c));
    return item;
  }

  // A record as a person knows it: its code and name; its identifier only when it has neither.
  function named(code, name, identifier, chars = 160) {
    if (!code && !name) return `<code>${esc(identifier)}</code>`;
    return `${code ? `<b>${esc(code)}</b> ` : ""}${name ? esc(clip(name, chars)) : ""}`;
  }

  function valuesTable(c) {  // each changed property: the old value beside the new
    const before = c.before || {}, after = c.after || {};
    const rows = c.changedProperties.map((p) => {
      const [old, now] = marked(shownValue(before[p]), shownValue(after[p]));
      return `<tr><th scope="row">${esc(p)}</th><td class="before">${old}</td><td class="after">${now}</td></tr>`;
    }).join("");
    return el(`<table class="values"><thead><tr><th scope="col">Property</th><th scope="col">Before</th><th scope="col">After</th></tr></thead><tbody>${rows}</tbody></table>`);
  }

  const shownValue = (v) => v === undefined || v === null ? "" : typeof v === "string" ? v : JSON.stringify(v);

  // Both texts with the words the other lacks marked (<del> in the old, <ins> in the new),
  // from the longest common sequence of words.
  function marked(a, b) {
    const x = a.split(/(\s+)/), y = b.split(/(\s+)/);
    if (x.length * y.length > 250000) return [esc(a), esc(b)];  // too long to compare here
    const n = x.length, m = y.length, L = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1));
    for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) {
      L[i][j] = x[i] === y[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
    }
    const old = [], now = [];
    let i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && x[i] === y[j]) { old.push(esc(x[i])); now.push(esc(y[j])); i++; j++; }
      else if (j < m && (i === n || L[i][j + 1] >= L[i + 1][j])) { now.push(/^\s+$/.test(y[j]) ? esc(y[j]) : `<ins>${esc(y[j])}</ins>`); j++; }
      else { old.push(/^\s+$/.test(x[i]) ? esc(x[i]) : `<del>${esc(x[i])}</del>`); i++; }
    }
    return [old.join(""), now.join("")];
  }

  // ---- routing -----------------------------------------------------------------------
  const navigate = (path, params) => {
    const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v));
    history.pushState(null, "", `${link(path)}${query.toString() ? `?${query}` : ""}`);
    route();
  };
  // What the views of other scripts (explore-align.js) are given.
  const helpers = { api, post, all, esc, natural, link, href, say, statement, plainText, main, navigate, explain };

  function notFound(path) {
    main.innerHTML = `<h1>Not found</h1><p>Nothing in the explorer at <code>${esc(path)}</code>: a standard's or a framework's address ends with its CASE UUID. <a href="${href("/")}">Start from the frameworks</a>.</p>`;
    say("Not found.", true);
  }

  async function route() {
    routed += 1;
    const path = location.pathname.startsWith(ROOT) ? location.pathname.slice(ROOT.length) : "/";
    const asked = new URLSearchParams(location.search).get("release");  // a link into a release
    if (asked !== null) {
      if (asked) sessionStorage.setItem(RELEASE, asked); else sessionStorage.removeItem(RELEASE);
      if ([...releasePick.options].some((o) => o.value === asked)) releasePick.value = asked;
    }
    if (!sessionStorage.getItem(KEY)) {
      main.innerHTML = `<h1>Welcome</h1><p>Enter your API key above to browse frameworks, read standards and see how they connect.</p>`;
      say("Enter your API key to start.");
      keyInput.focus();
      return;
    }
    say("Loading…");
    try {
      let m;
      const extra = (window.edukgViews || []).find((v) => v.pattern.test(path));
      if (extra) await extra.view(helpers);
      else if ((m = /^\/standards\/([0-9a-fA-F-]{36})\/?$/.exec(path))) await standardPage(m[1]);
      else if ((m = /^\/frameworks\/([0-9a-fA-F-]{36})\/?$/.exec(path))) await framework(m[1]);
      else if (/^\/changes\/?$/.test(path)) await changesPage();
      else if (path === "/" || path === "") await home();
      else notFound(path);
      const h1 = main.querySelector("h1");
      if (h1) { h1.tabIndex = -1; }
    } catch (err) {
      main.innerHTML = `<h1>Could not load this page</h1><p>${esc(explain(err))}</p>`;
      say(explain(err), true);
    }
  }

  document.addEventListener("click", (ev) => {
    const a = ev.target.closest("a[href]");
    if (!a || a.origin !== location.origin || !a.pathname.startsWith(ROOT) || ev.ctrlKey || ev.metaKey || ev.shiftKey) return;
    ev.preventDefault();
    history.pushState(null, "", a.pathname + a.search);
    route().then(() => main.focus());
  });
  window.addEventListener("popstate", route);
  document.getElementById("key-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const value = keyInput.value.trim();
    if (value) sessionStorage.setItem(KEY, value);
    keyInput.value = "";
    keyInput.placeholder = value ? "key set for this tab" : "ekg_...";
    loadReleases().then(route);
  });
  releasePick.addEventListener("change", () => {
    if (releasePick.value) sessionStorage.setItem(RELEASE, releasePick.value);
    else sessionStorage.removeItem(RELEASE);
    route();
  });
  document.getElementById("forget").addEventListener("click", () => {
    sessionStorage.removeItem(KEY); sessionStorage.removeItem(RELEASE); keyInput.placeholder = "ekg_..."; route();
  });
  if (sessionStorage.getItem(KEY)) keyInput.placeholder = "key set for this tab";
  const prefixed = /^\/releases\/([^/]+)\//.exec(location.pathname);  // opened as /releases/X/explore
  if (prefixed) sessionStorage.setItem(RELEASE, decodeURIComponent(prefixed[1]));
  loadReleases().then(route);
})();
