"""What the browser tests share: screenshots for review, and entering a key."""

from __future__ import annotations

from tests.conftest import Api
from tests.support import ROOT

SHOTS = ROOT / "artifacts" / "screenshots"


def shot(page: object, name: str, backend: str, full_page: bool = True) -> None:
    """A screenshot for review (a long page's whole length takes seconds: `full_page`)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}-{backend}.png"), full_page=full_page)  # type: ignore[attr-defined]


def enter_key(page: object, api: Api, key: str | None = None) -> None:
    page.goto(f"{api.server.url}/explore")  # type: ignore[attr-defined]
    page.fill("#key", key or api.key)  # type: ignore[attr-defined]
    page.click("text=Use key")  # type: ignore[attr-defined]
