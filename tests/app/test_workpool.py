"""app/workpool.py: a bounded pool for expensive work, shared fairly between keys."""

from __future__ import annotations

import asyncio
import threading
from functools import partial

import pytest

from edukg.app.workpool import Busy, KeyQueueFull, WorkPool


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
        assert pool.busy == 0 and not pool._keys
        pool.close()

    asyncio.run(scenario())


def test_a_keys_waiting_is_capped_and_others_are_untouched() -> None:
    """Key a floods (12 at once): beyond its running share and four waiting it gets 429,
    and key b's requests all run at once on the thread kept for others (the bug: a's
    queued requests filled every slot of the pool, and b got 503)."""

    async def scenario() -> None:
        pool = WorkPool(threads=2, waiting=8)
        release = threading.Event()
        flood = [asyncio.ensure_future(pool.run(lambda: release.wait(10), "a"))
                 for _ in range(12)]  # fmt: skip
        await asyncio.sleep(0.2)
        refused = [f for f in flood if f.done() and isinstance(f.exception(), KeyQueueFull)]
        assert len(refused) == 12 - 1 - pool.per_key
        for _ in range(5):
            assert await asyncio.wait_for(pool.run(lambda: "b", "b"), 5) == "b"
        release.set()
        await asyncio.gather(*flood, return_exceptions=True)
        assert pool.busy == 0 and pool.running == 0 and not pool._keys
        pool.close()

    asyncio.run(scenario())


def test_a_newcomer_gets_the_next_thread_among_many_waiting_keys() -> None:
    """Ten keys keep both threads busy and each has work waiting; a new key's request is
    the next to run when a thread frees, not the last (the bug: first come, first served
    across keys, so the refusal or the wait always landed on the newcomer)."""

    async def scenario() -> list[str]:
        pool = WorkPool(threads=2, waiting=30)
        gates = {f"k{n}": threading.Event() for n in range(10)}
        order: list[str] = []

        def work(name: str) -> str:
            order.append(name)
            gates[name].wait(10)
            return name

        # Every key has been served before (they keep the pool busy in turn) ...
        await asyncio.gather(*(pool.run(lambda: None, f"k{n}") for n in range(10)))
        # ... and now each has a long request running or waiting, and another behind it.
        held = [asyncio.ensure_future(pool.run(partial(work, f"k{n}"), f"k{n}"))
                for n in range(10) for _ in range(2)]  # fmt: skip
        await asyncio.sleep(0.2)
        assert len(order) == 2  # two threads, two keys running; the rest wait

        def new() -> str:
            order.append("new")
            return "new"

        newcomer = asyncio.ensure_future(pool.run(new, "new"))
        await asyncio.sleep(0.05)
        gates[order[0]].set()  # one long request ends
        assert await asyncio.wait_for(newcomer, 5) == "new"
        for gate in gates.values():
            gate.set()
        await asyncio.gather(*held)
        pool.close()
        return order

    order = asyncio.run(scenario())
    assert order.index("new") == 2, order  # the first thread that freed


def test_when_the_pool_is_full_the_heaviest_key_gives_way() -> None:
    async def scenario() -> None:
        pool = WorkPool(threads=2, waiting=4, per_key=4)
        release = threading.Event()
        heavy = [asyncio.ensure_future(pool.run(lambda: release.wait(10), "heavy"))
                 for _ in range(5)]  # fmt: skip
        other = asyncio.ensure_future(pool.run(lambda: release.wait(10), "other"))
        await asyncio.sleep(0.1)
        assert pool.busy == 6  # full: heavy runs one and waits four, other runs one
        light = asyncio.ensure_future(pool.run(lambda: "light", "light"))
        await asyncio.sleep(0.1)
        bumped = [f for f in heavy if f.done() and isinstance(f.exception(), Busy)]
        assert len(bumped) == 1 and not light.done()  # light waits, heavy gave one up
        release.set()
        assert await asyncio.wait_for(light, 5) == "light"
        await asyncio.gather(*heavy, other, return_exceptions=True)
        pool.close()

    asyncio.run(scenario())
