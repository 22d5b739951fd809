"""The agentic cheatsheets of a sweep on object storage: workers in other processes learn through
one keeper, which loses no update and publishes each one, and the next run starts from them."""

from __future__ import annotations

import pytest
import ray

from eval.sweep.cheatsheets import kept_cheatsheets
from eval.sweep.config import RayInitSettings
from eval.sweep.session import ray_session
from eval.sweep.storage import SharedStorage
from pipelines.agentic_mode.cheatsheet import Cheatsheet
from pipelines.agentic_mode.taxonomy import load_taxonomy
from pipelines.contracts import DatabaseRef
from pipelines.settings import CheatsheetSettings

pytestmark = [pytest.mark.ray, pytest.mark.timeout(180)]

RULE = "There is no column nme: use only columns listed under their table."


@pytest.fixture(scope="module")
def local_ray(s3):  # started after the moto server: its workers get the storage's environment
    with ray_session(RayInitSettings(num_cpus=2)):
        yield


def finding():
    return load_taxonomy().finding(
        "column_not_found", source="sqlite", detail="no such column: nme", identifier="nme"
    )


@ray.remote(num_cpus=0)
def learn(sheets, db: DatabaseRef, times: int) -> str:
    """A worker: records the finding ``times`` times through the keeper, then reads the sheet."""
    for _ in range(times):
        sheets(db).record(finding(), fixed=True)
    return sheets(db).render()


def test_workers_learn_through_one_keeper_and_the_next_run_starts_from_what_it_published(
    local_ray, s3_root, tmp_path
):
    db = DatabaseRef(db_id="music", path=str(tmp_path / "music.sqlite"))
    storage = SharedStorage(storage=s3_root, working=str(tmp_path / "driver"))
    settings = CheatsheetSettings(root=str(tmp_path / "driver" / "runs" / "cheatsheets"))
    with kept_cheatsheets(storage, settings) as sheets:
        seen = ray.get([learn.remote(sheets, db, 5) for _ in range(3)])
    assert seen == [f"Rules learned on this database:\n- {RULE}"] * 3
    (rule,) = Cheatsheet.open(settings, db).rules()  # the driver's copy, as published
    assert (rule.text, rule.seen, rule.fixed) == (RULE, 15, 15)  # no update lost

    # The next run, its keeper on another node's copy, starts from what was published.
    other = storage.model_copy(update={"working": str(tmp_path / "other")})
    there = CheatsheetSettings(root=str(tmp_path / "other" / "runs" / "cheatsheets"))
    with kept_cheatsheets(other, there) as sheets:
        sheets(db).record(finding())
    (rule,) = Cheatsheet.open(there, db).rules()
    assert (rule.seen, rule.fixed) == (16, 15)
    storage.fetch(settings.root)  # rewritten at the same size, fetched all the same
    assert Cheatsheet.open(settings, db).rules()[0].seen == 16
