"""app/workpool.py: a bounded pool for expensive work, shared fairly between keys."""

from __future__ import annotations

import asyncio
import threading
from functools import partial

import pytest

from edukg.app.workpool import Busy, WorkPool


def test_one_key_cannot_take_every_thread() -> None:
    async def scenario() -> list[str]:
        pool = WorkPool(threads=2, waiting=8)
        release = threading.Event()
        order: list[str] = []

        def slow(name: str) -> str:
            order.append(f"{name} started")
            release.wait(10)
            return name

        def quick() -> str:
            order.append("b ran")
            return "b"

        hogs = [asyncio.ensure_future(pool.run(partial(slow, f"a{n}"), "a")) for n in range(3)]
        await asyncio.sleep(0.2)  # key a's first job holds one thread; its others wait
        assert pool.busy == 3
        got = await asyncio.wait_for(pool.run(quick, "b"), 5)  # the thread kept for others
        assert got == "b"
        release.set()
        await asyncio.gather(*hogs)
        pool.close()
        return order

    order = asyncio.run(scenario())
    # b ran while only one of a's jobs had started: a's others waited their turn.
    assert sum(1 for o in order[: order.index("b ran")] if o.startswith("a")) == 1


def test_waiting_is_bounded_and_keys_leave_no_state() -> None:
    async def scenario() -> None:
        pool = WorkPool(threads=2, waiting=1)
        release = threading.Event()
        jobs = [
            asyncio.ensure_future(pool.run(lambda: release.wait(10), f"k{n}")) for n in range(3)
        ]
        await asyncio.sleep(0.1)
        with pytest.raises(Busy):
            await pool.run(lambda: None, "late")
        release.set()
        await asyncio.gather(*jobs)
        assert pool.busy == 0 and not pool._turns
        pool.close()

    asyncio.run(scenario())
