"""Reports the instance's BUSY/READY state to the group workflow without slowing executions down.

Coalescing policy (latest state wins, bounded rate):
- `set()` only records the wanted state and wakes one long-lived sender task; it never awaits.
- At most one signal is in flight, and two signals are at least `min_interval` apart. Transitions
  during that time collapse into the latest one, and nothing is sent when the state is back to
  what the workflow already has (a burst of short executions may send no signal at all).
- So the workflow learns of a lasting change within about `min_interval` + one RPC, and a driver
  running executions back to back sends at most 1 / `min_interval` signals per second.
- A failed signal (e.g. the workflow does not exist) is logged and dropped, not retried: the next
  change sends again. The client already retries transient RPC errors.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Literal

log = logging.getLogger("spark_runner.state")

InstanceState = Literal["BUSY", "READY"]
BUSY: InstanceState = "BUSY"
READY: InstanceState = "READY"


class StateReporter:
    def __init__(
        self,
        send: Callable[[InstanceState], Awaitable[None]],
        min_interval: float = 0.2,
        initial: InstanceState = READY,
    ) -> None:
        """`send` delivers one state (a signal); `initial` is what the workflow assumes already
        (an instance that announced itself ready is READY)."""
        self._send = send
        self._min_interval = min_interval
        self._wanted: InstanceState = initial
        self._reported: InstanceState = initial  # last state sent, whether or not it arrived
        self._last_sent_at = float("-inf")
        self._wake = asyncio.Event()
        self._failing = False

    def set(self, state: InstanceState) -> None:
        """Call from the event loop thread; returns at once."""
        self._wanted = state
        self._wake.set()

    async def run(self) -> None:
        """The sender; runs until cancelled."""
        loop = asyncio.get_running_loop()
        while True:
            await self._wake.wait()
            self._wake.clear()
            if self._wanted == self._reported:
                continue
            pause = self._last_sent_at + self._min_interval - loop.time()
            if pause > 0:
                await asyncio.sleep(pause)
                if self._wanted == self._reported:
                    continue
            state = self._wanted
            self._last_sent_at = loop.time()
            self._reported = state
            try:
                await self._send(state)
            except Exception as err:  # never let a lost signal affect executions
                # Log once per run of failures: a missing workflow would otherwise log every change.
                if not self._failing:
                    log.warning("instanceState %s not delivered: %s", state, err)
                self._failing = True
            else:
                self._failing = False
            # Changes that arrived while the signal was in flight are still pending.
            if self._wanted != self._reported:
                self._wake.set()
