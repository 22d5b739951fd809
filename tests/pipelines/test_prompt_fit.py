"""What a generation prompt gives up to fit the model's context, in order (pipelines/prompt_fit.py)."""

from __future__ import annotations

import pytest

from models.errors import ContextTooLong
from pipelines.agents.runtime import AgentRuntime
from pipelines.contracts import DatabaseRef, Task
from pipelines.prompt_fit import PromptFit, PromptLadder, PromptTooLong, within_context
from pipelines.schema.focus import FocusedSchema
from pipelines.schema.reference import ReferenceSchema, TableBlock
from pipelines.strategies.single_pass import SinglePassScaling
from pipelines.task_run import TaskRun
from pipelines.trace import TraceRecorder

NOTES = "/*\nColumn notes:\n{t}.kind: values: 'a' = alpha; 'b' = beta\n*/"


def block(name: str, width: int = 1) -> TableBlock:
    return TableBlock(
        name=name,
        text=f"CREATE TABLE {name} (id INT, kind TEXT)\n" + NOTES.format(t=name),
        rows=f"/*\n1 example rows:\nSELECT * FROM {name} LIMIT 1;\n{'x' * 300 * width}\n*/",
    )


REFERENCE = ReferenceSchema(tables=(block("a"), block("b"), block("c", 3), block("d")))
# shown hubs first; the linker ranked a first, then c (the one joining it), then b
FOCUSED = FocusedSchema(
    text=REFERENCE.text(["c", "a", "b"]),
    tables=("c", "a", "b"),
    focused=True,
    tokens=0,
    whole_tokens=REFERENCE.tokens,
    ranked=("a", "c", "b"),
)
LADDER = PromptLadder.of(REFERENCE, FOCUSED)


def refused(prompt_tokens: int | None = None, context: int | None = None) -> ContextTooLong:
    return ContextTooLong("too long", prompt_tokens=prompt_tokens, context=context, max_tokens=100)


def test_the_ladder_gives_up_help_then_rows_then_the_lowest_ranked_tables():
    assert [r.given_up for r in LADDER.rungs] == [
        "",
        "examples_and_cells",
        "sample_rows",
        "table:b",
        "table:c",
    ]
    assert [r.help for r in LADDER.rungs] == [True, False, False, False, False]
    assert LADDER.rungs[0].schema_text == FOCUSED.text
    assert [r.tables for r in LADDER.rungs[2:]] == [("c", "a", "b"), ("c", "a"), ("a",)]
    sizes = [r.tokens for r in LADDER.rungs]
    assert sizes == sorted(sizes, reverse=True) and sizes[2] < sizes[1]
    # column notes are never cut: every shown table keeps its whole block but its rows
    for rung in LADDER.rungs[2:]:
        assert "example rows" not in rung.schema_text
        for table in rung.tables:
            assert REFERENCE.tables["abcd".index(table)].text in rung.schema_text


def test_unranked_tables_are_not_given_up_and_a_schema_without_rows_skips_that_rung():
    bare = ReferenceSchema(tables=(block("a").model_copy(update={"rows": ""}),))
    whole = FocusedSchema(text=bare.text(), tables=("a",), focused=False, tokens=1, whole_tokens=1)
    ladder = PromptLadder.of(bare, whole)
    assert [r.given_up for r in ladder.rungs] == ["", "examples_and_cells"]


def test_the_next_rung_saves_what_the_server_says_must_go():
    # without the server's counts: one rung at a time
    assert LADDER.below(0, refused(), helps=True) == 1
    assert LADDER.below(1, refused(), helps=True) == 2
    # a caller without examples and cell values skips that rung: it would send the same prompt
    assert LADDER.below(0, refused(), helps=False) == 2
    # the server's overshoot at the refused prompt's rate: the rows save just enough here; below,
    # neither they nor 'b' save 300 tokens more than that, so the last rung
    rows, b = LADDER.rungs[2], LADDER.rungs[3]
    prompt = LADDER.rungs[1].tokens
    small = refused(prompt, prompt + 100 - (LADDER.rungs[1].tokens - rows.tokens))
    assert LADDER.below(1, small, helps=True) == 2
    big = refused(prompt, prompt + 100 - (LADDER.rungs[1].tokens - b.tokens) - 300)
    assert LADDER.below(1, big, helps=True) == 4
    # the last rung is taken whatever it saves; below it nothing is left
    assert LADDER.below(3, refused(prompt, 10), helps=True) == 4
    assert LADDER.below(4, refused(prompt, 10), helps=True) is None


def run_of() -> TaskRun:
    recorder = TraceRecorder("t", "q", "db")
    runtime = AgentRuntime(client=None, executor=None, recorder=recorder, call_cap=1)
    task = Task(task_id="t", question="q", db=DatabaseRef(db_id="db", path="x", dialect="sqlite"))
    return TaskRun(task=task, recorder=recorder, runtime=runtime, scaling=SinglePassScaling())


async def test_a_refused_call_goes_again_one_rung_down_and_later_calls_start_there():
    run = run_of()
    run.fit = PromptFit(ladder=LADDER)
    sent = []

    async def send(cut):
        sent.append(cut)
        if "CREATE TABLE b" in cut.schema_text:
            raise refused()
        return "answer"

    assert await within_context(run, send, stage="s", helps=False) == "answer"
    assert [c.given_up for c in sent] == ["", "sample_rows", "table:b"]
    assert run.light == run.ddl == LADDER.rungs[3].schema_text  # every agent's shared schema
    reduced = [d for d in run.recorder.decisions if d.label == "prompt.reduced"]
    assert [d.features["given_up"] for d in reduced] == [["sample_rows"], ["table:b"]]
    assert all(d.degradation for d in reduced) and reduced[-1].features["tables"] == "c,a"
    sent.clear()
    await within_context(run, send, stage="s")
    assert [c.given_up for c in sent] == ["table:b"]  # not refused again


async def test_nothing_left_to_give_up_is_the_typed_error_with_the_counts():
    run = run_of()
    run.fit = PromptFit(ladder=LADDER)

    async def send(cut):
        raise refused(9000, 8192)

    with pytest.raises(PromptTooLong) as error:
        await within_context(run, send, stage="s", helps=False)
    message = str(error.value)
    assert message.startswith("the smallest prompt (1 table shown) does not fit after giving up")
    assert "sample_rows, 2 tables" in message and "examples_and_cells" not in message
    assert "9,000 prompt tokens + 100 for the reply exceed the model's context of 8,192" in message
    assert (error.value.prompt_tokens, error.value.context) == (9000, 8192)
    assert isinstance(error.value, ContextTooLong)  # handled wherever a refusal is


async def test_a_refusal_for_length_does_not_count_against_the_call_cap():
    class Refusing:
        async def chat(self, request, *, role, budget):
            raise refused()

    run = run_of()
    run.runtime.client = Refusing()
    from models.types import ChatMessage, ChatRequest

    request = ChatRequest(messages=(ChatMessage(role="user", content="hi"),))
    for _ in range(3):
        with pytest.raises(ContextTooLong):
            await run.runtime.chat(request, role="generator", agent="g")
    assert run.runtime.calls == 0
    assert [e.attributes["error.type"] for e in run.recorder.events] == ["ContextTooLong"] * 3
