"""The cyclic garbage collector around a process's first listings.

Listing a large cluster makes millions of objects that live as long as the process (the parsed
pods, their keys), and makes them fast: the collector, triggered by allocations, then scans the
growing heap again and again and finds nothing to free (on 100,000 pods, about a third of the
time to apply the listings). So it is paused until the caches are ready, and what they hold is
then moved out of its sight (`gc.freeze`): the later collections, during churn, scan only what
was made since, not the whole cluster each time.

Bounded: if the listings are not in after `limit` seconds (an API server away, say, while
failed connections leave cycles behind), the collector runs again, and nothing is frozen. The
cost of freezing: an object alive then that later dies in a reference cycle is never freed. The
listed objects hold no cycles (a pod's parts are freed by their reference counts), so that is
the few objects of the process's own machinery alive at that moment, once.
"""

from __future__ import annotations

import asyncio
import gc
import logging

from .caching import Caches

logger = logging.getLogger("eq_kit.collector")

LIMIT = 60.0
"""Seconds the collector waits for the first listings at most."""


async def paused_while_listing(caches: Caches, limit: float = LIMIT) -> None:
    """Pause the collector until `caches` are ready (or `limit` seconds), then resume it, with
    what they hold frozen if they got ready. Meant to be started with the caches, as a task."""
    gc.disable()
    try:
        await asyncio.wait_for(caches.wait_ready(), limit)
    except TimeoutError:
        logger.info("the first listings took over %.0f s: collecting garbage again", limit)
    else:
        gc.freeze()
    finally:
        gc.enable()
