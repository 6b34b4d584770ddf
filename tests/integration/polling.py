"""poll(): wait for a condition with a deadline instead of sleeping, shared
by the integration tests (a test that polls fails with what it waited for,
and the last state when `what` or `diag` is a function)."""
from __future__ import annotations

import time


def poll(cond, timeout: float = 20.0, what="condition", interval: float = 0.02, diag=None):
    """Calls cond() until it returns a truthy value (returned) or fails
    after timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            extra = diag() if diag else ""
            raise AssertionError("timed out after %.0fs waiting for %s %s"
                                 % (timeout, what() if callable(what) else what, extra))
        time.sleep(interval)
