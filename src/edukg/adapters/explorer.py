"""The web explorer's files: one page and its assets, served with hashed names.

No build step: the page, its script and its style sheet ship in the package as
written. At start-up each asset gets a name with a hash of its content, so
browsers may cache assets for a year and still never run a stale script.

Mathematics in statements is typeset by KaTeX (MIT licence, static/katex/LICENSE),
shipped in the package with its fonts: the explorer works offline and loads nothing
from elsewhere, as its Content-Security-Policy says.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable

EXPLORER_PATH = "/explore"
_ASSETS = (
    ("katex/katex.min.js", "application/javascript"),
    ("explore-notation.js", "application/javascript"),
    ("explore.js", "application/javascript"),
    ("explore-align.js", "application/javascript"),
    ("explore.css", "text/css"),
    ("icon.svg", "image/svg+xml"),
)
_KATEX_CSS = "katex/katex.min.css"
_FONTS = "katex/fonts"
# KaTeX's style sheet names each font three times (woff2, woff, ttf); every browser the
# explorer supports reads woff2, the one shipped, so the rule keeps that one, hashed.
_FONT_RULE = re.compile(
    r'url\(fonts/(?P<name>[\w-]+)\.woff2\) format\("woff2"\)'
    r'(?:,url\(fonts/[\w-]+\.(?:woff|ttf)\) format\("(?:woff|truetype)"\))*'
)

# The page talks only to this server's API; nothing is loaded from elsewhere. KaTeX's
# markup sets sizes in style attributes ('unsafe-inline' for styles, never scripts).
SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        b"font-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; "
        b"form-action 'self'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
]


@dataclass(frozen=True)
class Asset:
    """One static file, ready to send."""

    body: bytes
    content_type: bytes


class Explorer:
    """The explorer page (for every path under /explore) and its hashed assets."""

    def __init__(self, api_base: str) -> None:
        files = resources.files("edukg.static")
        self.assets: dict[str, Asset] = {}
        names: dict[str, str] = {}
        for name, content_type in _ASSETS:
            names[name] = self._add(name, files.joinpath(name).read_bytes(), content_type)
        fonts = {
            font.name.removesuffix(".woff2"): self._add(font.name, font.read_bytes(), "font/woff2")
            for font in sorted(files.joinpath(_FONTS).iterdir(), key=lambda f: f.name)
            if font.name.endswith(".woff2")
        }
        names[_KATEX_CSS] = self._add(_KATEX_CSS, _katex_css(files, fonts), "text/css")
        page = files.joinpath("explore.html").read_text("utf-8")
        for marker, value in (
            ("__KATEX_JS__", names["katex/katex.min.js"]),
            ("__KATEX_CSS__", names[_KATEX_CSS]),
            ("__NOTATION_JS__", names["explore-notation.js"]),
            ("__ALIGN_JS__", names["explore-align.js"]),
            ("__JS__", names["explore.js"]),
            ("__CSS__", names["explore.css"]),
            ("__ICON__", names["icon.svg"]),
            ("__API__", api_base),
            ("__ROOT__", f"{EXPLORER_PATH}/"),
        ):
            page = page.replace(marker, value)
        self.page = page.encode()
        self.icon = self.assets[names["icon.svg"]]

    def _add(self, name: str, body: bytes, content_type: str) -> str:
        """Keep an asset under a name with its content's hash; its path."""
        stem, ext = name.rsplit("/", 1)[-1].split(".", 1)
        hashed = f"{stem}.{hashlib.sha256(body).hexdigest()[:12]}.{ext}"
        path = f"{EXPLORER_PATH}/assets/{hashed}"
        if not content_type.startswith("font/"):  # text: say its encoding
            content_type += "; charset=utf-8"
        self.assets[path] = Asset(body, content_type.encode())
        return path

    def respond(self, path: str) -> tuple[int, bytes, list[tuple[bytes, bytes]]] | None:
        """The asset at `path`, or the page for any other explorer path; None: unknown asset."""
        if path.startswith(f"{EXPLORER_PATH}/assets/"):
            asset = self.assets.get(path)
            if asset is None:
                return None
            year = b"public, max-age=31536000, immutable"
            return (
                200,
                asset.body,
                [(b"content-type", asset.content_type), (b"cache-control", year)],
            )
        headers = [(b"content-type", b"text/html; charset=utf-8"), (b"cache-control", b"no-cache")]
        return 200, self.page, [*headers, *SECURITY_HEADERS]


def _katex_css(files: Traversable, fonts: dict[str, str]) -> bytes:
    """KaTeX's style sheet with each font rule naming the shipped woff2 by its hashed path."""
    css = files.joinpath(_KATEX_CSS).read_text("utf-8")
    css = _FONT_RULE.sub(lambda m: f'url({fonts[m.group("name")]}) format("woff2")', css)
    if "url(fonts/" in css:  # a KaTeX update changed the rule's shape: say so at start
        raise RuntimeError(f"{_KATEX_CSS} names a font the explorer does not rewrite")
    return css.encode()
