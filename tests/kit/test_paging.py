"""The one LIST page iterator, as client-go's pager reads: `limit` per page, each page asking
for the last one's `continue` token, one full list when a token expired mid-way, errors raised
as they come, and no page asked for once the caller stops; or, reading ahead, the next page
asked for while the caller reads this one, and cancelled if the caller stops."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any

import orjson
import pytest
from eq_kit.decoding import Decode
from eq_kit.kube import ApiError, pages


class Pager:
    """Answers a LIST from `items`, `limit` at a time, tokens naming the next offset; records
    every request's parameters. `fail` maps a request's number (0: the first) to its error."""

    def __init__(self, items: list[str], fail: Mapping[int, ApiError] | None = None) -> None:
        self.items, self.fail = items, dict(fail or {})
        self.asked: list[dict[str, str]] = []
        self.answered = 0
        self.hold: asyncio.Event | None = None  # set: the answers after the first wait for it

    async def get_json(
        self, path: str, params: Mapping[str, str], decode: Decode = orjson.loads
    ) -> dict[str, Any]:
        assert path == "/api/v1/pods"
        self.asked.append(dict(params))
        error = self.fail.get(len(self.asked) - 1)
        if self.hold is not None and len(self.asked) > 1:
            await self.hold.wait()
        self.answered += 1
        if error is not None:
            raise error
        start = int(params.get("continue") or 0)
        end = start + int(params["limit"]) if "limit" in params else len(self.items)
        more = {"continue": str(end)} if end < len(self.items) else {}
        page = {"metadata": {"resourceVersion": "7", **more}, "items": self.items[start:end]}
        decoded: dict[str, Any] = decode(orjson.dumps(page))
        return decoded


async def listed(pager: Pager, **options: Any) -> list[list[str]]:
    return [page["items"] async for page in pages(pager, "/api/v1/pods", **options)]  # type: ignore[arg-type]


READING = pytest.mark.parametrize("ahead", [False, True], ids=["in-turn", "ahead"])


@READING
async def test_each_page_asks_for_the_token_of_the_one_before(ahead: bool) -> None:
    pager = Pager(list("abcde"))
    got = await listed(pager, params={"labelSelector": "team=a"}, limit=2, ahead=ahead)
    assert got == [["a", "b"], ["c", "d"], ["e"]]
    assert pager.asked == [
        {"labelSelector": "team=a", "limit": "2"},
        {"labelSelector": "team=a", "limit": "2", "continue": "2"},
        {"labelSelector": "team=a", "limit": "2", "continue": "4"},
    ]


async def test_pages_of_500_by_default_and_one_page_without_a_limit() -> None:
    pager = Pager(list("abc"))
    assert await listed(pager) == [["a", "b", "c"]]
    assert await listed(pager, limit=0) == [["a", "b", "c"]]
    assert pager.asked == [{"limit": "500"}, {}]


@READING
async def test_a_token_expired_mid_way_gives_one_full_list(ahead: bool) -> None:
    pager = Pager(list("abcde"), fail={1: ApiError(410, "continue token expired")})
    got = await listed(pager, params={"labelSelector": "team=a"}, limit=2, ahead=ahead)
    assert got == [["a", "b"], ["a", "b", "c", "d", "e"]]
    assert pager.asked[-1] == {"labelSelector": "team=a"}


@READING
@pytest.mark.parametrize(
    ("request_number", "status"),
    [(0, 410), (1, 500), (1, 403)],
    ids=["410-on-the-first-page", "500-mid-way", "403-mid-way"],
)
async def test_other_errors_are_raised(request_number: int, status: int, ahead: bool) -> None:
    pager = Pager(list("abcde"), fail={request_number: ApiError(status, "no")})
    with pytest.raises(ApiError) as raised:
        await listed(pager, limit=2, ahead=ahead)
    assert raised.value.status == status and len(pager.asked) == request_number + 1


async def test_no_page_is_asked_for_once_the_caller_stops() -> None:
    pager = Pager(list("abcde"))
    async with contextlib.aclosing(pages(pager, "/api/v1/pods", limit=2)) as listing:  # type: ignore[arg-type]
        async for page in listing:
            assert page["items"] == ["a", "b"]
            break
    assert len(pager.asked) == 1


async def test_reading_ahead_the_next_page_is_asked_for_before_the_caller_reads() -> None:
    """Asked, not only scheduled: the caller's work on a page may never await."""
    pager = Pager(list("abcde"))
    seen = []
    async for page in pages(pager, "/api/v1/pods", limit=2, ahead=True):  # type: ignore[arg-type]
        seen.append((page["items"], len(pager.asked)))
    assert seen == [(["a", "b"], 2), (["c", "d"], 3), (["e"], 3)]


class _Failed(Exception):
    pass


@pytest.mark.parametrize("stop", ["break", "raise"])
async def test_reading_ahead_the_page_asked_for_is_cancelled_once_the_caller_stops(
    stop: str,
) -> None:
    """Whether the caller stops or fails on a page, closing the listing (as the reflector
    does) cancels the request for the next one."""
    pager = Pager(list("abcde"))
    pager.hold = asyncio.Event()  # the second page's answer never comes
    listing = pages(pager, "/api/v1/pods", limit=2, ahead=True)  # type: ignore[arg-type]
    with contextlib.suppress(_Failed):
        async with contextlib.aclosing(listing):
            async for _ in listing:
                if stop == "raise":
                    raise _Failed
                break
    await asyncio.sleep(0)
    pager.hold.set()
    await asyncio.sleep(0)
    assert len(pager.asked) == 2 and pager.answered == 1
