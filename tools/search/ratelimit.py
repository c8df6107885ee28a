"""Per-backend pacing (a minimum interval between requests) and cool-downs after a 429."""

from __future__ import annotations

import asyncio
import time


class BackendPacer:
    def __init__(self, min_interval_s: dict[str, float], default_cooldown_s: float):
        self.min_interval_s = dict(min_interval_s)
        self.default_cooldown_s = default_cooldown_s
        self._next_slot: dict[str, float] = {}
        self._cooling_until: dict[str, float] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def cooling_for(self, backend: str) -> float:
        """Seconds this backend should still be left alone (0 when it may be used)."""
        return max(0.0, self._cooling_until.get(backend, 0.0) - time.monotonic())

    def cool_down(self, backend: str, seconds: float | None) -> None:
        wait = self.default_cooldown_s if seconds is None else min(seconds, 3600.0)
        self._cooling_until[backend] = time.monotonic() + wait

    async def wait_turn(self, backend: str) -> None:
        """Wait until this backend's minimum interval since its previous request has passed."""
        interval = self.min_interval_s.get(backend, 0.0)
        if interval <= 0:
            return
        lock = self._locks.setdefault(backend, asyncio.Lock())
        async with lock:
            delay = self._next_slot.get(backend, 0.0) - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            self._next_slot[backend] = time.monotonic() + interval
