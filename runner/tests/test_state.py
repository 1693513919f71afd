"""Coalescing of instanceState signals."""

from __future__ import annotations

import asyncio
import time

from spark_runner.state import BUSY, READY, InstanceState, StateReporter


class Recorder:
    def __init__(self, delay: float = 0.0, fail: bool = False) -> None:
        self.sent: list[InstanceState] = []
        self.delay = delay
        self.fail = fail

    async def __call__(self, state: InstanceState) -> None:
        self.sent.append(state)
        await asyncio.sleep(self.delay)
        if self.fail:
            raise RuntimeError("workflow not found")


async def with_reporter(reporter: StateReporter, scenario) -> None:  # type: ignore[no-untyped-def]
    task = asyncio.create_task(reporter.run())
    try:
        await scenario()
    finally:
        task.cancel()


def test_a_lasting_change_is_sent_at_once() -> None:
    send = Recorder()
    reporter = StateReporter(send, min_interval=0.05)

    async def scenario() -> None:
        reporter.set(BUSY)
        await asyncio.sleep(0.01)
        assert send.sent == [BUSY]
        await asyncio.sleep(0.06)
        reporter.set(READY)
        await asyncio.sleep(0.01)
        assert send.sent == [BUSY, READY]

    asyncio.run(with_reporter(reporter, scenario))


def test_back_to_back_executions_send_only_the_latest_state() -> None:
    send = Recorder(delay=0.02)
    reporter = StateReporter(send, min_interval=0.1)
    elapsed = 0.0

    async def scenario() -> None:
        nonlocal elapsed
        t0 = time.monotonic()
        for _ in range(50):
            reporter.set(BUSY)
            await asyncio.sleep(0)
            reporter.set(READY)
            await asyncio.sleep(0.002)
        elapsed = time.monotonic() - t0
        await asyncio.sleep(0.3)

    asyncio.run(with_reporter(reporter, scenario))
    # The first BUSY goes out at once; later flips collapse: at most one signal per min_interval while they
    # go on (on a loaded machine the 50 flips can take several intervals), and the last one sent is READY.
    assert send.sent[0] == BUSY and send.sent[-1] == READY
    assert all(a != b for a, b in zip(send.sent, send.sent[1:]))
    assert len(send.sent) <= 2 + 2 * int(elapsed / 0.1 + 1)


def test_no_signal_when_the_state_flips_back_before_the_sender_runs() -> None:
    send = Recorder()
    reporter = StateReporter(send, min_interval=0.05)

    async def scenario() -> None:
        reporter.set(BUSY)
        reporter.set(READY)
        await asyncio.sleep(0.1)

    asyncio.run(with_reporter(reporter, scenario))
    assert send.sent == []


def test_set_never_waits_for_a_slow_signal() -> None:
    send = Recorder(delay=1.0)
    reporter = StateReporter(send, min_interval=0.0)

    async def scenario() -> None:
        reporter.set(BUSY)
        await asyncio.sleep(0.01)  # the BUSY signal is now in flight
        started = time.perf_counter()
        reporter.set(READY)
        reporter.set(BUSY)
        assert time.perf_counter() - started < 0.01

    asyncio.run(with_reporter(reporter, scenario))


def test_a_failed_signal_is_not_retried_until_the_next_change() -> None:
    send = Recorder(fail=True)
    reporter = StateReporter(send, min_interval=0.01)

    async def scenario() -> None:
        reporter.set(BUSY)
        await asyncio.sleep(0.1)
        assert send.sent == [BUSY]
        reporter.set(READY)
        await asyncio.sleep(0.05)

    asyncio.run(with_reporter(reporter, scenario))
    assert send.sent == [BUSY, READY]
