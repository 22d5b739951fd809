import asyncio

import pytest

from pipelines.contracts import DatabaseRef
from pipelines.schema.cache import SchemaCache

SHOP = DatabaseRef(db_id="shop", path="/data/shop.sqlite")
SHOP_DUCK = DatabaseRef(db_id="shop", path="/data/shop.sqlite", dialect="duckdb")


class Reader:
    """Counts its reads; each waits for ``release`` and then answers or raises ``fail``."""

    def __init__(self, fail: Exception | None = None) -> None:
        self.calls = 0
        self.fail = fail
        self.release = asyncio.Event()

    async def __call__(self) -> str:
        self.calls += 1
        await self.release.wait()
        if self.fail is not None:
            raise self.fail
        return f"schema #{self.calls}"


async def test_concurrent_tasks_share_one_read_per_database():
    cache: SchemaCache[str] = SchemaCache()
    read = Reader()
    waiters = [asyncio.ensure_future(cache.get(SHOP, read)) for _ in range(3)]
    await asyncio.sleep(0)
    read.release.set()
    assert await asyncio.gather(*waiters) == ["schema #1"] * 3
    assert await cache.get(SHOP, read) == "schema #1"
    assert await cache.get(SHOP_DUCK, read) == "schema #2"  # another dialect, another read


async def test_a_failed_read_raises_as_itself_and_is_read_again():
    cache: SchemaCache[str] = SchemaCache()
    broken = Reader(fail=OSError("disk gone"))
    broken.release.set()
    with pytest.raises(OSError, match="disk gone"):
        await cache.get(SHOP, broken)
    fixed = Reader()
    fixed.release.set()
    assert await cache.get(SHOP, fixed) == "schema #1"


async def test_one_cancelled_task_does_not_cancel_the_read_for_the_others():
    cache: SchemaCache[str] = SchemaCache()
    read = Reader()
    impatient = asyncio.ensure_future(cache.get(SHOP, read))
    patient = asyncio.ensure_future(cache.get(SHOP, read))
    await asyncio.sleep(0)
    impatient.cancel()
    await asyncio.sleep(0)
    read.release.set()
    assert await patient == "schema #1"
    assert impatient.cancelled()
    assert await cache.get(SHOP, read) == "schema #1" and read.calls == 1
