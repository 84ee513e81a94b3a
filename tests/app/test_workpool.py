"""app/workpool.py: a bounded pool for expensive work, shared fairly between keys."""

from __future__ import annotations

import asyncio
import threading
from functools import partial

import pytest

from edukg.app.workpool import Busy, ClientGone, KeyQueueFull, WorkPool


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
        # Three keys hold a place each: a fourth, holding none, takes the waiting one's ...
        late = asyncio.ensure_future(pool.run(lambda: "late", "late"))
        await asyncio.sleep(0.1)
        assert isinstance(jobs[2].exception(), Busy) and not late.done()
        # ... and its next request, now that no key holds more than it does, is refused.
        with pytest.raises(Busy):
            await pool.run(lambda: None, "late")
        release.set()
        assert await late == "late"
        await asyncio.gather(*jobs[:2])
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


class Clock:
    """A clock the test moves: what a request "took" is what its job says, not how the
    machine happened to schedule it."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def takes(self, seconds: float) -> None:
        """A job that took `seconds` of the pool's time."""
        self.now += seconds


async def _settle() -> None:
    """Let the loop run what the last step made ready (grants, refusals)."""
    for _ in range(5):
        await asyncio.sleep(0)


async def _ten_keys_fill_the_pool(pool: WorkPool, gate: threading.Event,
                                  ) -> dict[str, asyncio.Future[bool]]:  # fmt: skip
    """Ten keys, one request each: two run (held by `gate`), eight wait; the pool is full."""
    held: dict[str, asyncio.Future[bool]] = {
        f"k{n}": asyncio.ensure_future(pool.run(gate.wait, f"k{n}")) for n in range(10)
    }
    await _settle()
    assert pool.busy == pool.slots == 10 and pool.running == 2
    return held


def test_a_key_holding_fewer_places_takes_one_from_a_key_holding_more() -> None:
    """Ten keys hold every place with one request each; a new key's request takes the
    place of one of their waiting requests (503 to that one) rather than being refused,
    and the keys it bumped, coming back, bump each other, never the new key (the bug: a
    bump needed a key with two more waiting than the newcomer, so it got 503)."""

    async def scenario() -> None:
        clock = Clock()
        pool = WorkPool(threads=2, waiting=8, clock=clock)
        for n in range(10):  # the flood has kept the pool busy: each key used 1 s of it
            await pool.run(partial(clock.takes, 1.0), f"k{n}")
        gate = threading.Event()
        held = await _ten_keys_fill_the_pool(pool, gate)
        newcomer = asyncio.ensure_future(pool.run(lambda: "new", "new"))
        await _settle()
        bumped = [k for k, f in held.items() if f.done() and isinstance(f.exception(), Busy)]
        assert len(bumped) == 1 and not newcomer.done()
        for _ in range(6):  # each key bumped comes back (it now holds fewer places)
            again = asyncio.ensure_future(pool.run(gate.wait, bumped[-1]))
            await _settle()
            assert not newcomer.done(), "the new key's request was bumped"
            held[bumped[-1]] = again
            bumped = [k for k, f in held.items() if f.done() and isinstance(f.exception(), Busy)]
        gate.set()
        assert await asyncio.wait_for(newcomer, 5) == "new"
        await asyncio.gather(*held.values(), return_exceptions=True)
        assert pool.busy == 0 and not pool._keys
        pool.close()

    asyncio.run(scenario())


def test_a_light_key_served_lately_goes_before_keys_that_used_more() -> None:
    """The new key was served last (its checks are short) but has used a hundredth of
    the pool the flooding keys used: a freed thread goes to it first, and it is never the
    one whose place is taken (the bug: the key served longest ago went first, so a key
    served lately waited behind every flooding key, and gave its place up)."""

    async def scenario() -> list[str]:
        clock = Clock()
        pool = WorkPool(threads=2, waiting=8, clock=clock)
        for n in range(10):
            await pool.run(partial(clock.takes, 1.0), f"k{n}")
        await pool.run(partial(clock.takes, 0.01), "light")  # served after them all
        gate = threading.Event()
        order: list[str] = []

        def work(name: str) -> None:
            order.append(name)
            gate.wait(10)

        held = {f"k{n}": asyncio.ensure_future(pool.run(partial(work, f"k{n}"), f"k{n}"))
                for n in range(10)}  # fmt: skip
        await _settle()
        light = asyncio.ensure_future(pool.run(partial(work, "light"), "light"))
        await _settle()
        assert not light.done()
        loser = next(k for k, f in held.items() if f.done())
        again = asyncio.ensure_future(pool.run(partial(work, loser), loser))  # bumps a flooder
        await _settle()
        assert not light.done()
        gate.set()
        await asyncio.wait_for(light, 5)
        await asyncio.gather(*held.values(), again, return_exceptions=True)
        pool.close()
        return order

    order = asyncio.run(scenario())
    assert order.index("light") == 2, order  # the first thread that freed


def test_of_keys_holding_as_many_the_one_that_held_places_longest_gives_way() -> None:
    """The light key has run longer on the threads than the waiting keys (they have not
    run yet) but has held a place for less time: when a key that lost its place comes
    back, a key that kept its request waiting gives way, not the light key (by threads
    run, it would have been the light key)."""

    async def scenario() -> None:
        clock = Clock()
        pool = WorkPool(threads=2, waiting=8, clock=clock)
        await pool.run(partial(clock.takes, 2.0), "light")
        gate = threading.Event()
        held = await _ten_keys_fill_the_pool(pool, gate)
        clock.takes(3.0)  # they hold their places for three seconds
        light = asyncio.ensure_future(pool.run(lambda: "light", "light"))
        await _settle()
        loser = next(k for k, f in held.items() if f.done())
        held[loser] = asyncio.ensure_future(pool.run(gate.wait, loser))
        await _settle()
        assert not light.done() and sum(1 for f in held.values() if f.done()) == 1
        gate.set()
        assert await asyncio.wait_for(light, 5) == "light"
        await asyncio.gather(*held.values(), return_exceptions=True)
        pool.close()

    asyncio.run(scenario())


def test_a_waiting_request_whose_client_has_gone_is_dropped() -> None:
    async def scenario() -> None:
        pool = WorkPool(threads=2, waiting=8)
        gate = threading.Event()
        running = [asyncio.ensure_future(pool.run(gate.wait, f"k{n}")) for n in range(2)]
        await _settle()
        ran: list[str] = []
        client_left = asyncio.Event()
        waiting = asyncio.ensure_future(
            pool.run(partial(ran.append, "dropped"), "late", client_left.wait)
        )
        await _settle()
        assert pool.busy == 3 and not waiting.done()
        client_left.set()
        await _settle()
        assert waiting.done() and isinstance(waiting.exception(), ClientGone)
        assert pool.busy == 2 and "late" not in pool._keys
        gate.set()
        await asyncio.gather(*running)
        assert ran == [] and pool.busy == 0
        # A request granted a thread at once never watches its client.
        assert await pool.run(lambda: "ok", "late", client_left.wait) == "ok"
        pool.close()

    asyncio.run(scenario())


def test_room_says_before_a_body_is_read_what_admission_would_say() -> None:
    async def scenario() -> None:
        pool = WorkPool(threads=2, waiting=8)
        gate = threading.Event()
        pool.room("a")  # empty: room for anyone
        flood = [asyncio.ensure_future(pool.run(gate.wait, "a")) for _ in range(9)]
        await _settle()
        with pytest.raises(KeyQueueFull):
            pool.room("a")  # its share runs and its 8 wait
        pool.room("b")  # b holds nothing: a thread is kept for it
        b = asyncio.ensure_future(pool.run(gate.wait, "b"))
        await _settle()
        assert pool.busy == pool.slots
        pool.room("c")  # full, but a holds more than c: c would take a place of a's
        busy = pool.busy
        with pytest.raises(KeyQueueFull):
            pool.room("a")
        assert pool.busy == busy and not any(f.done() for f in flood)  # room takes nothing
        gate.set()
        await asyncio.gather(*flood, b)
        pool.close()

    asyncio.run(scenario())


def test_equal_keys_in_a_full_pool_refuse_the_next() -> None:
    """Five keys with two places each fill the pool: a sixth request of one of them is
    refused (503), since no key holds more than it does."""

    async def scenario() -> None:
        pool = WorkPool(threads=2, waiting=8)
        gate = threading.Event()
        held = [asyncio.ensure_future(pool.run(gate.wait, f"k{n}"))
                for n in range(5) for _ in range(2)]  # fmt: skip
        await _settle()
        assert pool.busy == pool.slots
        with pytest.raises(Busy):
            pool.room("k0")
        with pytest.raises(Busy):
            await pool.run(gate.wait, "k0")
        assert not any(f.done() for f in held)
        gate.set()
        await asyncio.gather(*held)
        pool.close()

    asyncio.run(scenario())
