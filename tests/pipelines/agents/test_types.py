"""LessonsBlock scoping and rendering; producer families."""

from __future__ import annotations

from pipelines.agents.types import Lesson, LessonsBlock, family_of
from pipelines.contracts import ErrorClass


def test_family_of_producers():
    assert family_of("icl/cot/T=0.7") == "icl/cot"
    assert family_of("reasoning/T=0.2") == "reasoning"
    assert family_of("single_pass/T=0") == "single_pass"


def test_lessons_are_scoped_to_generators_and_rendered():
    block = LessonsBlock(
        avoid=(ErrorClass.wrong_join,),
        corrections=(Lesson(text="Join through orders, not order_items."),),
        warnings=(Lesson(text="Mind NULL regions.", scope=("icl/direct",)),),
    )
    direct = block.for_generator("icl/direct").render()
    reasoning = block.for_generator("reasoning").render()
    assert (
        "Avoid: wrong_join" in direct
        and "- Join through orders, not order_items. [all generators]" in direct
    )
    assert "## Warnings\n- Mind NULL regions. [icl/direct only]" in direct
    assert "Mind NULL" not in reasoning and "## Corrections" in reasoning
    assert LessonsBlock().render() == ""
