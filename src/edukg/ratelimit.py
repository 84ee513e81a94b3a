"""Per-key rate limits: a token bucket per key, in memory or shared through Redis.

A bucket holds up to `burst` tokens and refills at `rate` tokens per second;
each request takes one. The in-memory limiter counts per process; Redis counts
across every process and host, atomically, in one Lua script. If Redis cannot
be reached the API keeps serving (fails open), logs it, and says so in
/healthz: refusing every request because the limiter is down would turn a cache
outage into a full outage.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from dataclasses import dataclass
from typing import Protocol

log = logging.getLogger("edukg.ratelimit")


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


class MemoryLimiter:
    """Buckets in this process only: with several workers, each has its own."""

    def __init__(self) -> None:
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def hit(self, key: str, rate: float, burst: int, cost: int = 1) -> Decision:
        """Take `cost` tokens."""
        now = time.monotonic()
        with self._lock:
            tokens, stamp = self._buckets.get(key, (float(burst), now))
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

        self._redis = redis.Redis.from_url(url, socket_timeout=0.25, socket_connect_timeout=0.25)
        self._script = self._redis.register_script(_LUA)
        self._prefix = prefix
        self._errors = redis.RedisError
        self._ok = True
        self._last_error = ""
        self._logged_at = -float("inf")

    def hit(self, key: str, rate: float, burst: int, cost: int = 1) -> Decision:
        """Take `cost` tokens; on a Redis failure, allow the request (fail open)."""
        try:
            allowed, tokens = self._script(keys=[self._prefix + key], args=[rate, burst, cost])
        except self._errors as exc:
            self._ok, self._last_error = False, str(exc)
            if time.monotonic() - self._logged_at > 10:  # once per 10 s, not per request
                log.warning("rate limiter unavailable, serving without limits: %s", exc)
                self._logged_at = time.monotonic()
            return Decision(True, burst, burst, 0, 0)
        self._ok = True
        return _decide(float(tokens), bool(allowed), rate, burst, cost)

    def status(self) -> dict[str, object]:
        """Backend, and whether the last call reached Redis."""
        out: dict[str, object] = {"backend": "redis", "ok": self._ok, "scope": "shared"}
        if not self._ok:
            out["error"] = self._last_error
            out["failMode"] = "open: requests are served without limits until Redis returns"
        return out

    def close(self) -> None:
        """Close the connection pool."""
        self._redis.close()
