"""Every request the operator makes of the API server but its caches' LISTs and WATCHes, in one
place: its rank for the write budget, the budget's token, the request (the kit's `Http`), and
its outcome as a value the caller matches on (`Sent`), instead of an `except` per caller.

The outcomes, as the callers act on them:

- `Done`: 2xx, with the answer's JSON (decoded into the fields the caller reads).
- `Gone`: 404, the object is not there (an eviction of a pod already deleted, a group deleted
  meanwhile, an Event expired).
- `Conflict`: 409, another writer was first (the object exists already, a stale
  resourceVersion).
- `Refused`: 429, not now: a PodDisruptionBudget that allows no disruption (the Eviction API),
  or API Priority and Fairness's queue full; the server's message and `Retry-After` with it.
- `Failed`: any other error answer (another 4xx, a 5xx).
- `Unanswered`: no answer at all (one of the kit's `TRANSPORT_ERRORS`: a refused or broken
  connection, a timeout).

The four error answers share `ErrorAnswer` (the `ApiError`, its `retry_after`); every outcome but
`Done` says `why` as the logs always said it (the error's text for an answer, its repr for no
answer). Each caller keeps its own pacing and retries (the writer's work queue, the reclaim
backoff, the built-in groups' and the node pools' backoffs): this module sends once and says
what came of it.

Writes are paced by the client-side token bucket (`--api-qps`, `--api-burst`), served by rank
(`Rank`) when they wait for it. Reads (`read`) never wait for it, as the caches' reads do not.
Nor does the Lease: the leadership's `Sender` has no budget (`Sender(http)`), so that a burst
of label writes, queued behind each other at `--api-qps`, cannot hold a renewal past its
deadline and cost the leadership; it still goes through here, so that its outcomes read as
every other request's.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, ClassVar

import orjson
from eq_kit.decoding import Decode
from eq_kit.kube import JSON, TRANSPORT_ERRORS, ApiError, Http
from eq_kit.throttling import TokenBucket


class Rank(enum.IntEnum):
    """Who goes first when writes wait for the budget (`--api-qps`, `TokenBucket`): the lower
    the number, the sooner. Each rank gets only the tokens the ranks before it leave: under a
    budget smaller than the writes wanted, the labels wait while groups have writes due."""

    LOOP = 0
    """What the loop awaits before it goes on (the default rank of `Sender.send`, so the
    callers that write for the loop need not name it): evictions and the reclaim stamp, the
    built-in groups and the node pools' roots created. Each is bounded by its own pacing
    (`--max-evictions` per `--reclaim-delay`), and while the loop waits it recomputes nothing:
    behind the groups' writes it would leave them stale. (The gates' lifts, which the loop
    does not await, have a budget of their own: `settings.api_qps`.)"""
    GROUPS = 1
    """A group's annotations and `status.used`: what users and schedulers read. At most one
    write of a group is in flight, so their share is bounded by the groups that change."""
    EVENTS = 2
    """Events, sent by a task of their own (`events.Recorder`): nothing waits for them, and
    they are aggregated and bounded in number."""
    LABELS = 3
    """Pods' capacity labels: as many as the pods, they get what the rest leaves."""


@dataclass(frozen=True, slots=True)
class Done:
    """The server took the request (2xx); `body`: its answer."""

    body: dict[str, Any]
    answered: ClassVar[bool] = True


@dataclass(frozen=True, slots=True)
class ErrorAnswer:
    """The server answered with an error status (one of the four kinds below)."""

    error: ApiError
    answered: ClassVar[bool] = True

    @property
    def retry_after(self) -> float:
        """Seconds the server asked to wait (`Retry-After`); 0: not said."""
        return self.error.retry_after

    @property
    def why(self) -> str:
        """`409 the object has been modified`, as the logs say it."""
        return str(self.error)


@dataclass(frozen=True, slots=True)
class Gone(ErrorAnswer):
    """404: the object (or its API) is not there."""


@dataclass(frozen=True, slots=True)
class Conflict(ErrorAnswer):
    """409: another writer was first (the object exists, or changed since it was read)."""


@dataclass(frozen=True, slots=True)
class Refused(ErrorAnswer):
    """429: not now (a PodDisruptionBudget, or API Priority and Fairness)."""


@dataclass(frozen=True, slots=True)
class Failed(ErrorAnswer):
    """Any other error answer: another 4xx, a 5xx."""


@dataclass(frozen=True, slots=True)
class Unanswered:
    """No answer: the connection was refused or broke, or the request timed out."""

    error: Exception
    answered: ClassVar[bool] = False
    retry_after: ClassVar[float] = 0.0

    @property
    def why(self) -> str:
        """`ServerDisconnectedError('Server disconnected')`, as the logs say it."""
        return repr(self.error)


Sent = Done | Gone | Conflict | Refused | Failed | Unanswered
"""What came of one request."""
NotDone = Gone | Conflict | Refused | Failed | Unanswered
"""What came of a request that did not go through."""


def _answer(error: ApiError) -> Gone | Conflict | Refused | Failed:
    match error.status:
        case 404:
            return Gone(error)
        case 409:
            return Conflict(error)
        case 429:
            return Refused(error)
        case _:
            return Failed(error)


class Sender:
    """Sends the operator's requests through `http`, its writes within `budget` (None: not
    paced, the Lease's)."""

    def __init__(self, http: Http, budget: TokenBucket | None = None) -> None:
        self._http, self.budget = http, budget

    async def send(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        rank: Rank = Rank.LOOP,
        content_type: str = JSON,
        decode: Decode = orjson.loads,
    ) -> Sent:
        """A write (POST, PATCH, ...) of a JSON body, once the budget has a token for `rank`
        (a token the task holds already, `TokenBucket.holding`, is spent instead); `decode`:
        the answer whole, or the fields the caller reads (`decoding.fields`)."""
        if self.budget is not None:
            await self.budget.acquire(rank)
        try:
            answer = await self._http.send(
                method, path, body, content_type=content_type, decode=decode
            )
        except ApiError as error:
            return _answer(error)
        except TRANSPORT_ERRORS as error:
            return Unanswered(error)
        return Done(answer)

    async def read(self, path: str) -> Sent:
        """A GET of one object or list, never paced."""
        try:
            return Done(await self._http.get_json(path, {}))
        except ApiError as error:
            return _answer(error)
        except TRANSPORT_ERRORS as error:
            return Unanswered(error)
