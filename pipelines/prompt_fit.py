"""A generation prompt that fits the model's context: what a question's prompt gives up, in a
stated order, when the model server refuses it for length, so the question is answered with a
smaller prompt instead of none.

    call site ──► within_context(run, send) ──► send(run.fit.cut) ──► runtime.chat
                      refused for length (ContextTooLong, with the server's own counts)
                  ──► one rung down the question's ladder, for this call and every later one:
                        1. the retrieved solved examples and cell values
                        2. the example rows under each table
                        3. the lowest-ranked shown table, then the next (the top-ranked stays)
                      a table's column notes (value vocabularies, formats) are never cut: a
                      table is shown with all of its notes or not at all
                  ──► ``prompt.reduced`` in the trace (a degradation), run.light narrowed too
                  ──► send again; nothing left to give up: PromptTooLong (tokens vs context)

Why after a refusal and not a budget before sending: the server counts with the model's own
tokenizer and chat template and knows its context (a llama.cpp slot's, vLLM's max_model_len, a
hosted model's), while the pipeline knows neither for every backend; a refusal costs no
evaluation (llama.cpp answers in ~0.04 s, before any prompt token is evaluated) and names both
counts, so the ladder steps straight to a rung whose estimated saving covers the overshoot,
leaving room for the reply's ``max_tokens`` (llama.cpp accepts a prompt shorter than its context
and then cuts the reply at it). The rung reached is kept for the question: later calls (samples,
widening, fixes, critiques, scoring) start from it, share its prefix, and are not refused again.

    run.fit = PromptFit(ladder=PromptLadder.of(reference, focused))
    response = await within_context(run, lambda cut: run.runtime.chat(request(cut), ...),
                                    stage="single_pass", helps=False)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from core.types import Frozen
from models.errors import ContextTooLong
from pipelines.schema.focus import FocusedSchema
from pipelines.schema.reference import ReferenceSchema
from pipelines.schema.view import token_size

if TYPE_CHECKING:
    from pipelines.task_run import TaskRun

T = TypeVar("T")

REDUCED = "prompt.reduced"  # the decision (a degradation) of each step down
HELP = "examples_and_cells"
ROWS = "sample_rows"
TABLE = "table:"  # + the table given up


class PromptTooLong(ContextTooLong):
    """Even the smallest prompt the question has does not fit the model's context."""


class PromptCut(Frozen):
    """One rung of a question's ladder: what its generation prompts show."""

    help: bool = True  # the retrieved solved examples and cell values
    schema_text: str | None = None  # None: the caller's own schema, not narrowed here
    tables: tuple[str, ...] = ()  # shown, in prompt order
    tokens: int = 0  # estimated tokens of ``schema_text`` (pipelines.schema.view.token_size)
    given_up: str = ""  # what this rung gives up over the one above it


class PromptLadder(Frozen):
    """A question's prompts from the whole to the smallest, each rung giving up one thing more."""

    rungs: tuple[PromptCut, ...]

    @classmethod
    def help_only(cls) -> PromptLadder:
        """For a prompt whose schema is not the reference one (the agentic mode's entities, the
        full-width views): only the examples and cell values can go."""
        return cls(rungs=(PromptCut(), PromptCut(help=False, given_up=HELP)))

    @classmethod
    def of(cls, reference: ReferenceSchema, focused: FocusedSchema) -> PromptLadder:
        """The ladder of a reference schema prompt as ``focused`` shows it; tables are given up
        only where the focus ranked them (a schema shown whole unranked keeps every table)."""
        shown = list(focused.tables)
        whole = reference.sizes  # each table's estimate, as the focus counts it
        top = PromptCut(
            schema_text=focused.text,
            tables=tuple(shown),
            tokens=sum(whole.get(t, 0) for t in shown),
        )
        rungs = [top, top.model_copy(update={"help": False, "given_up": HELP})]
        # the same without the example rows (+1: the separator, as ReferenceSchema.sizes)
        bare = {b.name: token_size(b.text) + 1 for b in reference.tables if b.name in shown}

        def narrowed(given_up: str) -> PromptCut:
            return PromptCut(
                help=False,
                schema_text=reference.text(shown, rows=False),
                tables=tuple(shown),
                tokens=sum(bare.get(t, 0) for t in shown),
                given_up=given_up,
            )

        if any(b.rows for b in reference.tables if b.name in shown):
            rungs.append(narrowed(ROWS))
        for table in reversed([t for t in focused.ranked if t in shown][1:]):
            shown.remove(table)
            rungs.append(narrowed(TABLE + table))
        return cls(rungs=tuple(rungs))

    def below(self, step: int, refused: ContextTooLong, *, helps: bool) -> int | None:
        """The rung to send after rung ``step`` was refused: the first below it that gives up the
        examples and cell values (where the caller shows them: their size is the caller's), or
        whose schema text saves what the server says must go (its estimate turned into the server's
        tokens at the refused prompt's rate; the rate counts the question and instructions too,
        so a saving can fall short, and the next refusal steps further). The last rung is taken
        whatever it saves; None when no rung is left."""
        here = self.rungs[step]
        need = refused.overshoot
        last = len(self.rungs) - 1
        for lower in range(step + 1, len(self.rungs)):
            rung = self.rungs[lower]
            if rung.schema_text == here.schema_text:
                if helps and here.help:
                    return lower
                continue  # the same prompt for a caller that shows no examples or cell values
            if need is None or lower == last or here.schema_text is None or not here.tokens:
                return lower
            # the estimate over-counts Qwen's tokens of the enterprise schema by >= 28%
            # (enterprise_demo:19: 11,015 estimated schema tokens in an 8,584-token prompt)
            rate = refused.prompt_tokens / here.tokens if refused.prompt_tokens else 1.0
            if (here.tokens - rung.tokens) * rate >= need:
                return lower
        return None

    def given_up(self, above: int, below: int, *, helps: bool) -> tuple[str, ...]:
        """What the rungs from ``above`` (exclusive) to ``below`` (inclusive) give up."""
        found = [r.given_up for r in self.rungs[above + 1 : below + 1]]
        return tuple(g for g in found if helps or g != HELP)


class PromptFit(Frozen):
    """Where one question stands on its ladder (``TaskRun.fit``: every call of the question
    reads it, a refusal replaces it one rung or more down)."""

    ladder: PromptLadder
    step: int = 0

    @classmethod
    def help_only(cls) -> PromptFit:
        return cls(ladder=PromptLadder.help_only())

    @property
    def cut(self) -> PromptCut:
        return self.ladder.rungs[self.step]


async def within_context(
    run: TaskRun,
    send: Callable[[PromptCut], Awaitable[T]],
    *,
    stage: str,
    helps: bool = True,
) -> T:
    """``send(cut)`` with the question's current prompt; refused for length, sent again one
    rung down (recorded), until it fits or nothing is left to give up (``PromptTooLong``).
    ``helps``: whether the caller's prompt shows the examples and cell values."""
    while True:
        fit = run.fit
        try:
            return await send(fit.cut)
        except PromptTooLong:
            raise
        except ContextTooLong as exc:
            if run.fit.step != fit.step:  # another call of the question stepped down meanwhile
                continue
            lower = fit.ladder.below(fit.step, exc, helps=helps)
            if lower is None:
                raise _too_long(exc, fit, helps=helps) from exc
            lost = fit.ladder.given_up(fit.step, lower, helps=helps)
            run.fit = fit.model_copy(update={"step": lower})
            cut = run.fit.cut
            if cut.schema_text is not None:  # the schema every agent of the question shares
                run.light = run.ddl = cut.schema_text
            run.recorder.decide(
                REDUCED,
                stage,
                degradation=True,
                given_up=list(lost),
                prompt_tokens=exc.prompt_tokens,
                context=exc.context,
                max_tokens=exc.max_tokens,
                tables=",".join(cut.tables),
                tokens=cut.tokens,
            )


def _too_long(refused: ContextTooLong, fit: PromptFit, *, helps: bool) -> PromptTooLong:
    given_up = fit.ladder.given_up(0, fit.step, helps=helps)
    tables = sum(g.startswith(TABLE) for g in given_up)
    lost = [g for g in given_up if not g.startswith(TABLE)] + (
        [f"{tables} table{'s' * (tables != 1)}"] if tables else []
    )
    after = f" after giving up {', '.join(lost)}" if lost else ""
    if refused.prompt_tokens is not None and refused.context is not None:
        counts = (
            f"{refused.prompt_tokens:,} prompt tokens + {refused.max_tokens:,} for the reply "
            f"exceed the model's context of {refused.context:,}"
        )
    else:
        counts = f"the server refused it for length ({refused})"
    n = len(fit.cut.tables)
    shown = f" ({n} table{'s' * (n != 1)} shown)" if n else ""
    return PromptTooLong(
        f"the smallest prompt{shown} does not fit{after}: {counts}",
        prompt_tokens=refused.prompt_tokens,
        context=refused.context,
        max_tokens=refused.max_tokens,
    )
