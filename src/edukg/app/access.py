"""Who is asking, and may they: API keys (x-api-key or Bearer) and per-key rate limits."""

from __future__ import annotations

from typing import Any

from edukg.adapters.config import Settings
from edukg.app.http import Headers
from edukg.app.ratelimit import Decision, Limiter
from edukg.model.errors import AuthenticationError, RateLimitError
from edukg.store import KeyStore
from edukg.store.base import Principal, StoreUnavailable

Scope = dict[str, Any]
Head = dict[bytes, bytes]  # exchange.read_head


_LIMIT_HEADERS = frozenset((b"ratelimit-limit", b"ratelimit-remaining", b"ratelimit-reset"))


class Access:
    """The key and rate-limit checks of one app: what every request passes first."""

    def __init__(self, keys: KeyStore, limiter: Limiter, settings: Settings) -> None:
        self.keys = keys
        self.limiter = limiter
        self.settings = settings

    def authenticate(self, head: Head) -> Principal:
        """The key's holder: from `X-API-Key`, or `Authorization: Bearer` (every entrance
        takes both); AuthenticationError otherwise."""
        key = _key_of(head)
        if not key:
            raise AuthenticationError(
                "Missing API key: send it in the x-api-key header (or Authorization: Bearer)."
            )
        if key != key.strip():
            raise AuthenticationError(
                "The API key has spaces or other whitespace around it; send the key alone."
            )
        owner = self.keys.verify(key)
        if owner is None:
            raise AuthenticationError("Invalid or revoked API key.")
        return owner

    def limit_keyless(self, scope: Scope, extra: Headers, cost: int = 1) -> None:
        """A keyless CASE request (serve --case-public): the limit of its client address,
        apart from every key's (serve --case-public-rate)."""
        client = scope.get("client")
        address = str(client[0]) if client else "unknown"
        settings = self.settings
        anonymous = Principal(f"case-public:{address}", settings.case_public_rate,
                              settings.case_public_burst)  # fmt: skip
        self.limit(anonymous, extra, cost, f"keyless CASE requests from {address}")

    def keyless_allowed(self, head: Head) -> bool:
        """A CASE request that names no key, with the CASE paths public (--case-public)."""
        return self.settings.case_public and not _key_of(head)

    def limit(
        self, principal: Principal, extra: Headers, cost: int = 1, label: str | None = None
    ) -> None:
        """Take `cost` tokens from the principal's bucket; RateLimitError when it is empty."""
        rate, burst = self._rate_of(principal)
        if rate <= 0:
            return  # an unlimited key (e.g. for benchmarks)
        decision: Decision = self.limiter.hit(principal.name, rate, burst, min(cost, burst))
        # A request charged twice (a body's price once read) says where its bucket is now.
        extra[:] = [h for h in extra if h[0] not in _LIMIT_HEADERS]
        extra.extend(
            (
                (b"ratelimit-limit", str(decision.limit).encode()),
                (b"ratelimit-remaining", str(decision.remaining).encode()),
                (b"ratelimit-reset", str(decision.reset).encode()),
            )
        )
        if not decision.allowed:
            extra.append((b"retry-after", str(decision.retry_after).encode()))
            raise RateLimitError(
                f"Rate limit exceeded for {label or f'key {principal.name!r}'} ({rate:g}"
                " requests per second, "
                f"bursts of {burst}). Retry after {decision.retry_after} s.",
                {"retryAfter": decision.retry_after},
            )

    def known_key(self, head: Head) -> Principal | None:
        """The key's holder when a valid key came with the request, else None (no error)."""
        try:
            principal = self.authenticate(head)
            self.confirm()
        except (AuthenticationError, StoreUnavailable):
            return None
        return principal

    def confirm(self) -> None:
        """A key remembered from an earlier request is still live (keys.confirm)."""
        if not self.keys.confirm():
            raise AuthenticationError("Invalid or revoked API key.")

    def limits_of(self, principal: Principal) -> dict[str, object]:
        rate, burst = self._rate_of(principal)
        if rate <= 0:
            return {"limited": False, "source": "none set (serve --rate or keys create --rate)"}
        source = "key" if principal.rate is not None else "server default (--rate)"
        return {"limited": True, "rate": rate, "burst": burst, "source": source}

    def _rate_of(self, principal: Principal) -> tuple[float, int]:
        rate = self.settings.rate if principal.rate is None else principal.rate
        burst = self.settings.burst if principal.burst is None else principal.burst
        return rate, burst


def _key_of(head: Head) -> str | None:
    """The key a request names, from `X-API-Key` or else `Authorization: Bearer`."""
    value = head.get(b"x-api-key")
    if value is not None:
        return value.decode("latin-1")
    value = head.get(b"authorization")
    if value is not None:
        scheme, _, token = value.decode("latin-1").partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return token.strip()
    return None
