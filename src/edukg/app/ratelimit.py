"""Per-key rate limits: a token bucket per key, in memory or shared through Redis.

A bucket holds up to `burst` tokens and refills at `rate` tokens per second;
each request takes one (expensive ones more). The in-memory limiter counts per process;
Redis counts across every process and host, atomically, in one Lua script.

If Redis fails (down, or silent), the call that found out pays one short timeout; then
a circuit opens and, for the next few seconds, each process limits on its own (its
in-memory buckets, at the key's full rate) without waiting on Redis at all; then one
call probes Redis again. Refusing every request because the limiter is down would turn
a cache outage into a full outage; waiting on it for every request would too.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from dataclasses import dataclass
from typing import Protocol

log = logging.getLogger("edukg.app.ratelimit")

TIMEOUT = 0.25  # seconds for a Redis connect or command: it answers in well under 1 ms
OPEN_SECONDS = 5.0  # after a failure, Redis is skipped this long before one probe


@dataclass(frozen=True)
class Decision:
    """The outcome of one request against its bucket."""

    allowed: bool
    limit: int  # the burst: requests allowed at once
    remaining: int
    reset: int  # seconds until the bucket is full again
    retry_after: int  # seconds until one request is allowed (0 when allowed)


class Limiter(Protocol):
    """Takes one token from a key's bucket."""

    def hit(self, key: str, rate: float, burst: int, cost: int = 1) -> Decision:
        """Take `cost` tokens for `key`; `rate` per second, at most `burst` at once."""

    def status(self) -> dict[str, object]:
        """For /healthz: which backend, and whether it is working."""


def _decide(tokens: float, allowed: bool, rate: float, burst: int, cost: int = 1) -> Decision:
    missing = burst - tokens
    reset = math.ceil(missing / rate) if missing > 0 else 0
    retry = 0 if allowed else max(1, math.ceil((cost - tokens) / rate))
    return Decision(allowed, burst, max(0, int(tokens)), reset, retry)


_MAX_BUCKETS = 65_536  # per process


class MemoryLimiter:
    """Buckets in this process only: with several workers, each has its own."""

    def __init__(self) -> None:
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def hit(self, key: str, rate: float, burst: int, cost: int = 1) -> Decision:
        """Take `cost` tokens."""
        now = time.monotonic()
        with self._lock:
            known = self._buckets.get(key)
            if known is None and len(self._buckets) >= _MAX_BUCKETS:
                # Keyless clients have a bucket per address: the oldest made goes first
                # (its client starts again with a full bucket), so memory stays bounded.
                del self._buckets[next(iter(self._buckets))]
            tokens, stamp = known or (float(burst), now)
            tokens = min(float(burst), tokens + (now - stamp) * rate)
            allowed = tokens >= cost
            if allowed:
                tokens -= cost
            self._buckets[key] = (tokens, now)
        return _decide(tokens, allowed, rate, burst, cost)

    def status(self) -> dict[str, object]:
        """Always working; counts per process."""
        return {"backend": "memory", "ok": True, "scope": "per process"}


# KEYS[1]: the bucket; ARGV: rate, burst, cost. Time comes from Redis itself, so hosts with
# skewed clocks still share one bucket fairly.
_LUA = """
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local state = redis.call('HMGET', KEYS[1], 'tokens', 'stamp')
local tokens = tonumber(state[1])
local stamp = tonumber(state[2])
if tokens == nil then tokens = burst; stamp = now end
tokens = math.min(burst, tokens + (now - stamp) * rate)
local allowed = 0
if tokens >= cost then tokens = tokens - cost; allowed = 1 end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'stamp', tostring(now))
redis.call('EXPIRE', KEYS[1], math.ceil(burst / rate) + 60)
return {allowed, tostring(tokens)}
"""


class RedisLimiter:
    """Buckets in Redis, shared by every process and host that uses the same Redis."""

    def __init__(self, url: str, prefix: str = "edukg:rl:") -> None:
        try:
            import redis  # noqa: PLC0415 - only loaded when Redis is configured
        except ImportError:
            raise RuntimeError(
                "Redis support is not installed: pip install 'edukg[redis]'"
            ) from None

        self._redis = redis.Redis.from_url(
            url, socket_timeout=TIMEOUT, socket_connect_timeout=TIMEOUT, retry_on_timeout=False
        )
        self._script = self._redis.register_script(_LUA)
        self._prefix = prefix
        self._errors = redis.RedisError
        self._ok = True
        self._last_error = ""
        self._logged_at = -float("inf")
        self._open_until = -float("inf")  # the circuit: Redis is skipped until then
        self._circuit = threading.Lock()
        self._local = MemoryLimiter()  # each process's own buckets while Redis is out

    def hit(self, key: str, rate: float, burst: int, cost: int = 1) -> Decision:
        """Take `cost` tokens in Redis; while it is out, in this process's own buckets."""
        if not self._try_redis():
            return self._local.hit(key, rate, burst, cost)
        try:
            allowed, tokens = self._script(keys=[self._prefix + key], args=[rate, burst, cost])
        except self._errors as exc:
            self._trip(exc)
            return self._local.hit(key, rate, burst, cost)
        self._ok, self._open_until = True, -float("inf")
        return _decide(float(tokens), bool(allowed), rate, burst, cost)

    def _try_redis(self) -> bool:
        """Whether this call may use Redis: the circuit is closed, or it is this call's
        turn to probe (one call per open period; the others go on locally)."""
        if self._ok:
            return True
        with self._circuit:
            if time.monotonic() >= self._open_until:
                self._open_until = time.monotonic() + OPEN_SECONDS  # others: local meanwhile
                return True
        return False

    def _trip(self, exc: Exception) -> None:
        with self._circuit:
            self._ok, self._last_error = False, str(exc)
            self._open_until = time.monotonic() + OPEN_SECONDS
        if time.monotonic() - self._logged_at > 10:  # once per 10 s, not per request
            log.warning(
                "rate limiter unavailable, limiting per process for %g s: %s", OPEN_SECONDS, exc
            )
            self._logged_at = time.monotonic()

    def status(self) -> dict[str, object]:
        """Backend, and whether the last call reached Redis."""
        out: dict[str, object] = {"backend": "redis", "ok": self._ok, "scope": "shared"}
        if not self._ok:
            out["error"] = self._last_error
            out["circuit"] = "open"
            out["failMode"] = (
                "circuit open: each process limits on its own until Redis answers again"
            )
        return out

    def close(self) -> None:
        """Close the connection pool."""
        self._redis.close()
