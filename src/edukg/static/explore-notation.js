// edukg explorer: statements' notation. The export writes formulas as TeX between dollar
// signs, in the same sentences as prices; this script typesets the formulas with KaTeX
// (static/katex, MIT, shipped with the package) and gives the rest markdown's emphasis.
// explore.js and explore-align.js use it through window.edukgNotation.
(() => {
  "use strict";
  const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;",
    ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

  // The export writes formulas and prices in the same sentences ("a woman making $25 an
  // hour ... an additional $\frac{1}{10}$"). A pair of dollar signs is a formula only
  // when what lies between reads as one: no space after the first, no run of words, no
  // digit after the second. The rule is src/edukg/cli/notation.py's, which writes the
  // same formulas as plain text in the terminal.
  const PROSE = /[A-Za-z]{2,}\s+[A-Za-z]{3,}|[A-Za-z]{3,}\s+[A-Za-z]{2,}/;
  const WORDS_ALLOWED = /\\(?:text|mathrm|textrm|operatorname)\s*\{[^{}]*\}|\\[A-Za-z]+/g;
  const readsAsMath = (inner, after) => inner !== "" && !/^\s/.test(inner) && !/^[0-9]/.test(after)
    && !PROSE.test(inner.replace(WORDS_ALLOWED, " "));

  function mathSpans(text) {  // [isFormula, part] pieces, a formula's dollar signs gone
    const marks = [...text.matchAll(/(?<!\\)\$/g)].map((m) => m.index);
    const out = [];
    let at = 0, i = 0;
    while (i + 1 < marks.length) {
      const start = marks[i], end = marks[i + 1];
      if (readsAsMath(text.slice(start + 1, end), text.slice(end + 1, end + 2))) {
        out.push([false, text.slice(at, start)], [true, text.slice(start + 1, end)]);
        at = end + 1; i += 2;
      } else i += 1;
    }
    out.push([false, text.slice(at)]);
    return out.filter(([, part]) => part);
  }

  // KaTeX (static/katex, MIT) from this server. A record's TeX is data: no \href or
  // \includegraphics (trust: false), bounded sizes and macro expansion; a dash in a
  // formula is a minus sign.
  const KATEX = { throwOnError: false, strict: false, trust: false, maxSize: 10, maxExpand: 100 };
  function formula(tex) {
    try {
      // A fraction of fractions set inline shrinks to unreadable: display size for it.
      const nested = /\\d?frac\s*\{[^{}]*\\d?frac/.test(tex) ? "\\displaystyle " : "";
      if (window.katex) return window.katex.renderToString(nested + tex.replace(/[–—]/g, "-"), KATEX);
    } catch (err) { /* shown as written, below */ }
    return esc(`$${tex}$`);
  }

  function emphasis(text) {
    return esc(text).replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>").replace(/\*([^*]+)\*/g, "<em>$1</em>");
  }

  function statement(text) {
    // Formulas typeset; emphasis applies around them (and may wrap them).
    const maths = [];
    const marked = mathSpans(String(text ?? "").replace(/\u0002/g, "")).map(([isMath, part]) => {
      if (!isMath) return part;
      maths.push(formula(part));
      return `\u0002${maths.length - 1}\u0002`;
    }).join("");
    return emphasis(marked).replace(/\u0002(\d+)\u0002/g, (_, n) => maths[Number(n)]);
  }

  // A statement as plain words, where markup cannot go (the progression graph's boxes,
  // labels and titles, breadcrumbs): \frac{1}{b} 1/b, x^{2} x², \times ×, no asterisks.
  const SYMBOLS = { times: "×", div: "÷", cdot: "·", pm: "±", neq: "≠", ne: "≠", le: "≤", leq: "≤", ge: "≥", geq: "≥",
    approx: "≈", pi: "π", theta: "θ", degree: "°", circ: "°", infty: "∞", Box: "□", lt: "<", gt: ">" };
  const SPACED = new Set("× ÷ ± ≠ ≤ ≥ ≈".split(" "));
  const UP = Object.fromEntries([..."0123456789+-n"].map((c, n) => [c, "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻ⁿ"[n]]));
  const part = (s) => /^[\w.]+$|^\S$|^[\w.]*\(.*\)$/.test(s) ? s : `(${s})`;
  const raised = (t) => ["°", "st", "nd", "rd", "th"].includes(t) ? t
    : [...t].every((c) => UP[c]) ? [...t].map((c) => UP[c]).join("") : t.length > 1 ? `^(${t})` : `^${t}`;
  function plainFormula(tex) {
    let s = tex.replace(/[–—]/g, "-").replace(/\\(?:left|right)\.?/g, "").replace(/\\(?:text|mathrm)\s*\{([^{}]*)\}/g, "$1")
      .replace(/\\([A-Za-z]+)/g, (m, name) => SYMBOLS[name] ? (SPACED.has(SYMBOLS[name]) ? ` ${SYMBOLS[name]} ` : SYMBOLS[name]) : m);
    for (let before = ""; before !== s;) {  // the innermost braces first
      before = s;
      s = s.replace(/(\d?)\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}/g, (m, whole, a, b, at, all) => {
        const shown = `${part(a.trim())}/${part(b.trim())}`;  // raised as a whole: (1/3)³
        return `${whole ? `${whole} ` : ""}${all[at + m.length] === "^" ? `(${shown})` : shown}`;
      })
        .replace(/\\sqrt\s*\{([^{}]*)\}/g, (_, a) => `√${part(a.trim())}`)
        .replace(/\^\{([^{}]*)\}|\^([^{}\s\\])/g, (_, many, one) => raised((many ?? one).trim()));
      if (s === before) s = s.replace(/\{([^{}]*)\}/, "$1");  // then a group's braces, one at a time
    }
    return s.replace(/\\([A-Za-z]+)/g, "$1").replace(/\s+/g, " ").replace(/\(\s+/g, "(").replace(/\s+\)/g, ")")
      .replace(/°\s+(?=[CF]\b)/g, "°").replace(/\s+°/g, "°").trim();
  }
  const plainText = (text) => mathSpans(String(text ?? "")).map(([isMath, p]) => isMath ? plainFormula(p) : p.replace(/\*+(?=\S)|(?<=\S)\*+/g, "")).join("");

  window.edukgNotation = { statement, plainText, mathSpans };
})();
