"""The web explorer in a real headless browser (Debian's Chromium, driven by Playwright)."""

from __future__ import annotations

import re
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import httpx
import orjson

from edukg.ingest.builder import load
from edukg.ingest.demo import demo_case_uuid, demo_lines
from harness.exports import write_export
from tests.browser import enter_key, shot
from tests.conftest import Api
from tests.support import TWO_SKILLS as _TWO_SKILLS
from tests.support import assert_gzipped_on_request


def backend_of(api: Api) -> str:
    return (
        "postgres"
        if "postgres" in str(api.http.get("/healthz", headers={"x-api-key": api.key}).json())
        else "demo"
    )


def test_drill_read_follow_search(page: object, demo: Api) -> None:
    p = page
    enter_key(p, demo)
    p.wait_for_selector("#fws li a")  # type: ignore[attr-defined]
    p.select_option("#jur", "Multi-State")  # type: ignore[attr-defined]
    p.select_option("#subj", "Mathematics")  # type: ignore[attr-defined]
    shot(p, "frameworks", "demo")
    p.click("text=edukg Demo Mathematics Standards")  # type: ignore[attr-defined]
    for code in ("4.NF", "4.NF.B", "4.NF.B.3"):
        p.click(f"button[aria-label='Show children of {code}']")  # type: ignore[attr-defined]
    p.wait_for_selector("text=4.NF.B.3.a")  # type: ignore[attr-defined]
    toggle = p.locator("button[aria-label='Show children of 4.NF.B.3']")  # type: ignore[attr-defined]
    assert toggle.get_attribute("aria-expanded") == "true"
    shot(p, "tree", "demo")
    p.click("li:has(> .node .code:text-is('4.NF.B.3.a')) > .node a")  # type: ignore[attr-defined]
    p.wait_for_selector(".statement")  # type: ignore[attr-defined]
    assert "/explore/standards/" + demo_case_uuid("ms-math", "4.NF.B.3.a") in p.url  # type: ignore[attr-defined]
    crumbs = p.inner_text(".crumbs")  # type: ignore[attr-defined]
    assert "edukg Demo Mathematics Standards" in crumbs and "4.NF.B.3" in crumbs
    assert p.locator(".graph svg a.before").count() == 2  # type: ignore[attr-defined]
    shot(p, "standard", "demo")
    # Follow a prerequisite in the progression graph.
    p.click(".graph a.before[aria-label^='3.NF.A.1']")  # type: ignore[attr-defined]
    p.wait_for_url(f"**/explore/standards/{demo_case_uuid('ms-math', '3.NF.A.1')}")  # type: ignore[attr-defined]
    p.wait_for_selector(".statement math")  # type: ignore[attr-defined]
    assert "Understand a unit fraction" in p.inner_text(".statement")  # type: ignore[attr-defined]
    assert p.locator(".statement math mfrac").count() >= 2  # type: ignore[attr-defined]
    assert p.locator(".statement em").count() >= 1  # type: ignore[attr-defined]
    assert "Sharing Sandwiches Fairly" in p.inner_text("main")  # type: ignore[attr-defined]
    # Search by code within the framework.
    p.click(".crumbs a >> nth=1")  # type: ignore[attr-defined]
    p.fill("#q", "3.nf.a")  # type: ignore[attr-defined]
    p.click("#find button")  # type: ignore[attr-defined]
    p.wait_for_selector("#results li")  # type: ignore[attr-defined]
    found = p.inner_text("#results")  # type: ignore[attr-defined]
    assert "3.NF.A.1" in found and "3.NF.A.3.d" in found and "4.NF" not in found
    p.fill("#q", "number line")  # type: ignore[attr-defined]
    p.click("#find button")  # type: ignore[attr-defined]
    p.locator("#results", has_text="3.NF.A.2").wait_for()  # type: ignore[attr-defined]
    shot(p, "search", "demo")


def test_bad_key_is_refused_in_plain_words(page: object, demo: Api) -> None:
    enter_key(page, demo, key="ekg_not-a-key")
    page.wait_for_selector(".status.error")  # type: ignore[attr-defined]
    assert "did not accept your key" in page.inner_text("#status")  # type: ignore[attr-defined]
    assert "ekg_not-a-key" not in page.url  # type: ignore[attr-defined]
    cookies = page.context.cookies()  # type: ignore[attr-defined]
    assert cookies == []


def test_phone_width_and_keyboard(browser: object, demo: Api) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844})  # type: ignore[attr-defined]
    p = context.new_page()
    enter_key(p, demo)
    p.wait_for_selector("#fws li a")
    width = p.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, width  # no sideways scrolling
    p.goto(f"{demo.server.url}/explore/standards/{demo_case_uuid('ms-math', '4.NF.A.1')}")
    p.wait_for_selector(".statement")
    shot(p, "standard-phone", "demo")
    # Everything is reachable with the keyboard: tab to the first link in main and open it.
    p.focus("main")
    p.keyboard.press("Tab")
    focused = p.evaluate("document.activeElement.tagName")
    assert focused in ("A", "BUTTON", "INPUT", "SELECT")
    assert p.locator("h1").count() == 1 and p.locator("h2").count() >= 5
    context.close()


def test_sample_real_data(page: object, sample: Api) -> None:
    p = page
    enter_key(p, sample)
    p.wait_for_selector("#fws li a")  # type: ignore[attr-defined]
    p.click("text=California Common Core State Standards - Mathematics")  # type: ignore[attr-defined]
    p.fill("#q", "3.NF.A.1")  # type: ignore[attr-defined]
    p.click("#find button")  # type: ignore[attr-defined]
    p.wait_for_selector("#results li a")  # type: ignore[attr-defined]
    p.click("#results li a >> nth=0")  # type: ignore[attr-defined]
    p.wait_for_selector(".statement")  # type: ignore[attr-defined]
    text = p.inner_text("main")  # type: ignore[attr-defined]
    assert "3.NF.A.1" in text and "California" in text
    assert "Standard (Standard)" not in text  # the type once, not twice
    assert p.locator("table tbody tr").count() >= 1  # type: ignore[attr-defined]  # crosswalk
    shot(p, "standard-sample", "sample")


def test_sample_alignment_and_coverage_say_what_they_mean(page: object, sample: Api) -> None:
    p = page
    enter_key(p, sample)
    p.goto(f"{sample.server.url}/explore/align")  # type: ignore[attr-defined]
    p.wait_for_selector("#align-text")  # type: ignore[attr-defined]
    intro = p.inner_text("main")  # type: ignore[attr-defined]
    assert "about 2 in 3 right" in intro and "0.6 or more is a close match" not in intro
    p.fill("#align-text", "Solve x^2 - 5x + 6 = 0 by factoring, then by the quadratic formula.")  # type: ignore[attr-defined]
    p.select_option("#align-where", "California")  # type: ignore[attr-defined]
    p.click("#align-form button[type=submit]")  # type: ignore[attr-defined]
    p.wait_for_selector("#aligned > li .code")  # type: ignore[attr-defined]
    listed = p.inner_text("#aligned")  # type: ignore[attr-defined]
    assert p.locator("#aligned .chip[class*=conf-]").count() >= 1  # type: ignore[attr-defined]
    assert "Stands in" in listed and "places" in listed  # California's repeats, once each
    shot(p, "align-sample", "sample", full_page=False)
    framework = sample.ok("/standards-frameworks", jurisdiction="California")["data"][0]
    p.goto(f"{sample.server.url}/explore/coverage?curriculum=im360"  # type: ignore[attr-defined]
           f"&framework={framework['caseIdentifierUUID']}")  # fmt: skip
    p.wait_for_selector("#totals:has-text('No item of im360')")  # type: ignore[attr-defined]
    assert not p.locator("#grid").is_visible()  # type: ignore[attr-defined]
    # The note is said once (it was also the status line), and the list of curricula is
    # asked for once a tab, not on every visit.
    assert "No item of im360" not in p.inner_text("#status")  # type: ignore[attr-defined]
    asked: list[str] = []
    p.on("request", lambda r: asked.append(r.url))  # type: ignore[attr-defined]
    p.goto(f"{sample.server.url}/explore/coverage")  # type: ignore[attr-defined]
    p.wait_for_selector("#totals:has-text('No item of im360')")  # type: ignore[attr-defined]
    assert not [u for u in asked if "curriculumId=-" in u or "%20" in u], asked
    chosen = p.input_value("#framework")  # type: ignore[attr-defined]
    listed = sample.ok("/standards-frameworks", includeNonCurrent="true")["data"]
    picked = next(f for f in listed if f["caseIdentifierUUID"] == chosen)
    assert picked["academicSubject"] == "Mathematics" and picked["jurisdiction"] == "Multi-State"


def test_assets_are_hashed_and_cached_long(demo: Api) -> None:
    html = demo.http.get("/explore").text
    for asset in ("explore.", ".js", ".css"):
        assert asset in html
    src = html.split('src="')[1].split('"')[0]
    response = demo.http.get(src)
    assert response.status_code == 200
    assert "immutable" in response.headers["cache-control"]
    assert demo.http.get("/explore").headers["cache-control"] == "no-cache"
    assert "default-src 'self'" in demo.http.get("/explore").headers["content-security-policy"]
    assert httpx.get(f"{demo.server.url}/explore/assets/nope.js").status_code == 404


def test_katex_ships_with_its_fonts_and_licence(demo: Api) -> None:
    """KaTeX comes from this server, its style sheet naming only the woff2 fonts shipped
    (by their hashed names), with its MIT licence beside it in the package."""
    html = demo.http.get("/explore").text
    css_path = next(p for p in re.findall(r'href="([^"]+)"', html) if "/katex." in p)
    css = demo.http.get(css_path)
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    fonts = re.findall(r"url\(([^)]+)\)", css.text)
    assert len(fonts) == 20 and all(f.endswith(".woff2") for f in fonts), fonts
    font = demo.http.get(fonts[0])
    assert font.status_code == 200 and font.headers["content-type"] == "font/woff2"
    assert "immutable" in font.headers["cache-control"]
    assert any("/katex." in p and p.endswith(".min.js") for p in re.findall(r'src="([^"]+)"', html))
    policy = demo.http.get("/explore").headers["content-security-policy"]
    assert "font-src 'self'" in policy and "script-src 'self';" in policy
    licence = resources.files("edukg.static").joinpath("katex/LICENSE").read_text("utf-8")
    assert licence.startswith("The MIT License")


def test_record_values_never_become_markup_or_script_links(
    page: object, serve: Callable[[str], Api], tmp_path: Path
) -> None:
    hostile_uuid = '"><img src=x onerror=alert(1)><b x="'
    target, licensed = demo_case_uuid("ms-math", "4.NF.A.1"), demo_case_uuid("ms-math", "3.NF.A.1")
    lines = []
    for line in demo_lines():
        record = orjson.loads(line)
        props = record.get("properties", {})
        if props.get("caseIdentifierUUID") == target:
            props["caseIdentifierUUID"] = hostile_uuid
        if props.get("caseIdentifierUUID") == licensed:
            props["license"] = "javascript:alert(1)"
            # TeX is data too: KaTeX makes no link or element id of it (trust: false).
            props["description"] += " $\\href{javascript:alert(1)}{x} + \\htmlId{y}{z}$"
        lines.append(orjson.dumps(record))
    db = str(tmp_path / "hostile.db")
    load([str(write_export(tmp_path / "v1.0.0", lines))], db, "1.0.0")
    api = serve(db)
    p: Any = page
    enter_key(p, api)
    p.wait_for_selector("#fws li a")
    p.click("text=edukg Demo Mathematics Standards")
    for code in ("4.NF", "4.NF.A"):
        p.click(f"button[aria-label='Show children of {code}']")
    p.wait_for_selector("text=4.NF.A.1")
    assert p.locator("main img").count() == 0 and p.locator("main b[x]").count() == 0
    p.goto(f"{api.server.url}/explore/standards/{licensed}")
    p.wait_for_selector(".statement")
    assert "javascript:alert(1)" in p.inner_text("main")  # shown as text
    assert p.locator("a[href^='javascript']").count() == 0
    assert p.locator(".statement .katex").count() >= 1 and p.locator("#y").count() == 0


# Aligning a text (its other tests: tests/test_text_alignment.py). Browser tests live
# here, apart from the MCP tests: the browser's event loop must not outlive into theirs.
def test_the_explorer_aligns_a_text_and_shows_similar_standards(page: object, demo: Api) -> None:
    p: Any = page
    enter_key(p, demo)
    p.goto(f"{demo.server.url}/explore/align")
    p.wait_for_selector("#align-text")
    p.fill("#align-text", _TWO_SKILLS)
    p.select_option("#align-where", "Multi-State")
    p.click("#align-form button[type=submit]")
    p.wait_for_selector("#aligned > li .code")
    listed = p.inner_text("#aligned")
    assert "3.MD.A.1" in listed and "2.NBT.A.2" in listed
    assert "Tell time to the nearest minute" in listed
    marks = p.locator("#align-shown mark")
    assert marks.count() >= 1 and marks.first.inner_text() in _TWO_SKILLS
    shot(p, "align-text", backend_of(demo))
    p.click("#aligned > li .code >> nth=0")
    p.wait_for_selector("#similar li")
    assert "Similar standards in" in p.inner_text("#standard-parts")
    p.select_option("#similar-where", "Vermont")
    # A locator, not a script: the page's Content Security Policy forbids eval.
    p.locator("#similar", has_text="M.").wait_for()


def test_the_explorer_checks_a_text_against_a_standard(page: object, demo: Api) -> None:
    p: Any = page
    enter_key(p, demo)
    p.goto(f"{demo.server.url}/explore/align")
    p.wait_for_selector("#align-text")
    p.fill("#align-text", _TWO_SKILLS)
    p.select_option("#align-where", "Multi-State")
    p.click("#align-form button[type=submit]")
    p.wait_for_selector("#aligned > li .code")
    first = p.inner_text("#aligned > li .code >> nth=0")
    p.click("#aligned > li a.check-link >> nth=0")  # the result's check, with the text
    p.wait_for_selector(".check-result strong")
    assert first in p.inner_text("h1")
    result = p.inner_text(".check-result")
    assert ("Aligned" in result or "Not aligned" in result) and "learning components" in result
    assert p.input_value(".check-text") == _TWO_SKILLS
    shot(p, "check-text", backend_of(demo))
    # A standard's own page checks a pasted text against it.
    p.click("h1 a")
    p.wait_for_selector("#check-h")
    p.fill("#standard-parts ~ section .check-text", "What is 12 + 7?")
    p.click("#standard-parts ~ section button[type=submit]")
    p.wait_for_selector("#standard-parts ~ section .check-result strong")
    assert "Not aligned" in p.inner_text("#standard-parts ~ section .check-result")


def test_an_alignment_with_no_answer_says_why(page: object, demo: Api) -> None:
    p: Any = page
    enter_key(p, demo)
    p.goto(f"{demo.server.url}/explore/align")
    p.wait_for_selector("#align-text")
    p.fill("#align-text", "Please bring your signed permission slip for the field trip by"
                          " Friday. The bus leaves at 8:30.")  # fmt: skip
    p.click("#align-form button[type=submit]")
    p.wait_for_selector("#aligned > li")
    text = p.inner_text("#aligned")
    assert "does not read as mathematics" in text and "10 standards" not in p.content()


def test_not_found_icon_narrow_pages_and_readable_boxes(browser: object, sample: Api) -> None:
    icon = sample.http.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    context = browser.new_context(viewport={"width": 390, "height": 844})  # type: ignore[attr-defined]
    p = context.new_page()
    missing: list[str] = []
    p.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
    enter_key(p, sample)
    p.wait_for_selector("#fws li a")
    # An address that names nothing says so (it showed the home page).
    p.goto(f"{sample.server.url}/explore/standards/not-a-uuid")
    p.wait_for_selector("h1:text-is('Not found')")
    assert "not-a-uuid" in p.inner_text("main")
    # A high-school standard: one chip for its grades, the page as narrow as the phone.
    found = sample.ok("/academic-standards/search", query="quadratic functions", limit=25)
    high = next(s for s in found if len(s.get("gradeLevel") or []) >= 4)
    p.goto(f"{sample.server.url}/explore/standards/{high['caseIdentifierUUID']}")
    p.wait_for_selector(".statement")
    chips = p.locator("dl.facts .chip").all_inner_texts()
    assert len(chips) == 1 and chips[0].startswith("Grades "), chips
    assert p.evaluate("document.documentElement.scrollWidth") <= 390
    # Progression boxes show the code and a statement's words, not 16 characters of it.
    standard = sample.ok("/academic-standards/search", query="3.NF.A.1", limit=5)[0]
    p.goto(f"{sample.server.url}/explore/standards/{standard['caseIdentifierUUID']}")
    p.wait_for_selector(".statement")
    if p.locator(".graph svg").count():
        lines = p.locator(".graph svg a text").all_text_contents()
        assert max(len(t) for t in lines) > 20, lines
    shot(p, "standard-narrow", "sample")
    assert missing == [], missing  # no favicon.ico 404, nothing else missing
    context.close()


def test_the_explorer_and_the_document_come_gzipped_to_who_asks(demo: Api) -> None:
    for path in ("/explore", "/openapi.json"):
        assert_gzipped_on_request(demo.http.get, path, "Accept-Encoding")


def test_compare_names_the_course_of_a_code_courses_share(page: object, sample: Api) -> None:
    """California's course standards repeat codes ("1.0" in several courses); the compare
    list names each one's course."""
    p: Any = page
    enter_key(p, sample)
    listed = sample.ok("/standards-frameworks", includeNonCurrent="true")["data"]
    ca = next(f for f in listed if f["jurisdiction"] == "California")["caseIdentifierUUID"]
    ms = next(f for f in listed if f["jurisdiction"] == "Multi-State")["caseIdentifierUUID"]
    p.goto(f"{sample.server.url}/explore/compare?source={ca}&target={ms}")
    p.wait_for_selector("#pairs li")
    courses = p.locator("#pairs .chip.course").all_inner_texts()
    assert courses and all(c.strip() for c in courses), courses


def _standard(api: Api, code: str, jurisdiction: str) -> dict[str, Any]:
    found = api.ok("/academic-standards/search", query=code, jurisdiction=jurisdiction, limit=5)
    return next(s for s in found if s["statementCode"] == code)


def test_mathematics_is_typeset_and_a_price_stays_a_price(page: object, sample: Api) -> None:
    """7.EE.B.3 writes prices and formulas in one sentence ("$25 an hour ... an additional
    $\\frac{1}{10}$"): the formulas are typeset by the shipped KaTeX, the prices stay text."""
    p: Any = page
    blocked = _refused_by_policy(p)
    fetched: list[str] = []
    p.on("response", lambda r: fetched.append(r.url) if r.ok else None)
    enter_key(p, sample)
    p.wait_for_selector("#fws li a")
    standard = _standard(sample, "7.EE.B.3", "Multi-State")
    p.goto(f"{sample.server.url}/explore/standards/{standard['caseIdentifierUUID']}")
    p.wait_for_selector(".statement .katex")
    shown = p.locator(".statement .katex-html")  # what the eye reads, not the MathML copy
    assert shown.count() == 3, shown.all_inner_texts()  # 1/10, 9 3/4, 27 1/2
    visible = p.inner_text(".statement")
    assert "\\frac" not in visible and "$\\" not in visible, visible
    assert "$25 an hour" in visible and "$2.50" in visible and "$27.50" in visible
    assert p.locator(".statement em").count() == 1  # "*For example: ...*", once
    assert p.locator(".statement .katex mfrac").count() == 3  # read aloud as fractions
    # The fonts come from this server, allowed by the page's policy, and are used.
    p.evaluate("document.fonts.ready.then(() => true)")
    assert p.evaluate("document.fonts.check('16px KaTeX_Main')")
    assert any("/explore/assets/KaTeX_Main-Regular." in u and u.endswith(".woff2") for u in fetched)
    assert blocked == [], blocked
    shot(p, "math-standard", "sample", full_page=False)
    # The same statement in the Align page's results.
    p.goto(f"{sample.server.url}/explore/align")
    p.wait_for_selector("#align-text")
    p.fill("#align-text", "A woman earns $25 an hour and gets a 10% raise: an additional 1/10 of"
                          " her salary. Use mental computation to estimate her new salary.")  # fmt: skip
    p.click("#align-form button[type=submit]")
    p.wait_for_selector("#aligned > li .code")
    item = p.locator("#aligned > li", has_text="7.EE.B.3").first
    assert item.locator(".katex").count() == 3
    assert "\\frac" not in item.inner_text()
    assert blocked == [], blocked


def test_the_check_page_one_heading_the_jurisdiction_and_the_text_first_on_a_phone(
    browser: object, sample: Api
) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844})  # type: ignore[attr-defined]
    p: Any = context.new_page()
    try:
        enter_key(p, sample)
        p.wait_for_selector("#fws li a")
        p.goto(f"{sample.server.url}/explore/align")
        p.wait_for_selector("#align-text")
        p.fill("#align-text", "Find the unit rate: a car travels 120 miles in 3 hours. Is the"
                              " distance proportional to the time? Graph it on a coordinate"
                              " plane and check whether the graph is a line through the"
                              " origin.")  # fmt: skip
        p.select_option("#align-where", "California")
        p.click("#align-form button[type=submit]")
        p.wait_for_selector("#aligned > li .code")
        # On a phone the text with its evidence comes first, then the ten results.
        assert _top(p, "#align-shown") < _top(p, "#aligned > li")
        assert p.inner_text("#status").strip() == ""  # the results say it: no line above
        p.click("#aligned > li a.check-link >> nth=0")
        p.wait_for_selector(".check-result strong")
        headings = p.locator("main :is(h1, h2, h3)", has_text="Check a text")
        assert headings.count() == 1, headings.all_inner_texts()
        assert "California" in p.inner_text("main h1")
        assert p.inner_text("#status").strip() == ""  # no stray "Aligned." above the heading
        if p.locator(".check-components > li").count():
            assert _top(p, ".check-shown") < _top(p, ".check-components > li")
        assert p.evaluate("document.documentElement.scrollWidth") <= 390
        shot(p, "check-phone", "sample")
    finally:
        context.close()


def _refused_by_policy(p: Any) -> list[str]:
    """What the page's Content-Security-Policy refuses, as Chromium reports it."""
    refused: list[str] = []
    p.on(
        "console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None
    )
    return refused


def _top(p: Any, selector: str) -> float:
    box = p.locator(selector).first.bounding_box()
    assert box is not None, selector
    return float(box["y"])
