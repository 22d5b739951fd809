import pytest

from models.backends.slot_router import SlotRouter

SCHEMA_A = "CREATE TABLE singer (id INTEGER, name TEXT);\n" * 40
SCHEMA_B = "CREATE TABLE flight (id INTEGER, origin TEXT);\n" * 40


def busy(router: SlotRouter) -> None:
    """A request in flight on a slot the server chose: later ones are routed."""
    assert router.acquire("another request") is None


def test_with_nothing_in_flight_the_server_picks() -> None:
    router = SlotRouter(slots=2)
    assert router.acquire(SCHEMA_A + "Q1") is None
    pinned = router.acquire(SCHEMA_A + "Q2")  # the first is still in flight
    assert pinned is not None
    router.release(None)
    router.release(pinned)
    assert router.acquire(SCHEMA_A + "Q3") is None


def test_shared_prefix_goes_to_the_same_slot() -> None:
    router = SlotRouter(slots=4)
    busy(router)
    first = router.acquire(SCHEMA_A + "Q: how many singers?")
    other = router.acquire(SCHEMA_B + "Q: how many flights?")
    again = router.acquire(SCHEMA_A + "Q: oldest singer?")
    assert again == first and other != first


def test_idle_slot_remembers_its_prefix() -> None:
    router = SlotRouter(slots=2)
    busy(router)
    slot = router.acquire(SCHEMA_A + "Q1")
    router.release(slot)
    router.acquire(SCHEMA_B + "Q2")  # takes the other, least-used slot
    assert router.acquire(SCHEMA_A + "Q3") == slot


def test_a_deep_queue_spills_to_another_slot() -> None:
    router = SlotRouter(slots=3, max_queue=2)
    busy(router)
    slots = [router.acquire(SCHEMA_A + f"Q{i}") for i in range(3)]
    assert slots[0] == slots[1] and slots[2] != slots[0]


def test_short_common_prefix_is_not_affinity() -> None:
    router = SlotRouter(slots=2, min_shared_chars=1000)
    busy(router)
    first = router.acquire("You are a SQL expert.\n" + SCHEMA_A)
    second = router.acquire("You are a SQL expert.\n" + SCHEMA_B)
    assert first != second


def test_rejects_zero_slots() -> None:
    with pytest.raises(ValueError):
        SlotRouter(slots=0)
