"""The web explorer's files: one page and its assets, served with hashed names.

No build step: the page, its script and its style sheet ship in the package as
written. At start-up each asset gets a name with a hash of its content, so
browsers may cache assets for a year and still never run a stale script.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources

EXPLORER_PATH = "/explore"
_ASSETS = (
    ("explore.js", "application/javascript"),
    ("explore-align.js", "application/javascript"),
    ("explore.css", "text/css"),
    ("icon.svg", "image/svg+xml"),
)

# The page talks only to this server's API; nothing is loaded from elsewhere.
SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        b"img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
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
            body = files.joinpath(name).read_bytes()
            stem, ext = name.rsplit(".", 1)
            hashed = f"{stem}.{hashlib.sha256(body).hexdigest()[:12]}.{ext}"
            names[name] = f"{EXPLORER_PATH}/assets/{hashed}"
            self.assets[names[name]] = Asset(body, f"{content_type}; charset=utf-8".encode())
        page = files.joinpath("explore.html").read_text("utf-8")
        for marker, value in (
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
