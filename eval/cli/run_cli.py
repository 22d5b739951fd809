"""``scale-analytics eval [--multirun] [key=value ...]``: run configured pipelines over a benchmark.

    scale-analytics eval scaling=single_pass benchmark=spider_dev_sub9 model=qwen2.5-coder-1.5b
    scale-analytics eval experiment=ablation benchmark.limit=12          # one run per variant
    scale-analytics eval --multirun model=qwen2.5-coder-0.5b,qwen2.5-coder-1.5b scaling=single_pass

Each configuration becomes a resumable run directory and one MLflow run; rerunning the same
command continues where it stopped. Ends with the EX table and where everything was written.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence

from hydra.errors import HydraException
from rich.console import Console
from rich.markup import escape

from core import stop
from core.cli_errors import fail, user_errors
from core.config import load_config
from eval.errors import EvalError
from eval.experiments import Configuration, expand, report_overrides
from eval.loaders import LoadedBenchmark, load_benchmark
from eval.reporting.summary import print_summary
from eval.run import RunOutcome, run_configuration
from eval.sweep.errors import SweepInterrupted
from eval.sweep.progress import budget_line, duration
from eval.sweep.services import shared_model_servers
from eval.sweep.session import ray_session
from models.errors import ModelError


def run_all(configurations: Sequence[Configuration], console: Console) -> list[RunOutcome]:
    """Run every configuration in one Ray session, loading each benchmark and model once.

    Under a time budget (``sweep.budget_s``) the first configuration answers as many questions
    as fit, and the others answer the same ones, so that they compare on equal questions.
    """
    benchmarks: dict[str, LoadedBenchmark] = {}
    outcomes: list[RunOutcome] = []
    sweep = configurations[0].sweep
    if sweep.budget_s is not None:
        console.print(
            f"answering within {duration(sweep.budget_s)} (sweep.budget_s={sweep.budget_s:g}): "
            "as many questions as this machine's pace fits",
            highlight=False,
        )
    with ray_session(sweep.ray), shared_model_servers([c.model for c in configurations]):
        for configuration in configurations:
            key = configuration.benchmark.model_dump_json()
            if key not in benchmarks:
                benchmarks[key] = load_benchmark(configuration.benchmark)
            benchmark = benchmarks[key]
            if outcomes and outcomes[0].sweep.left:
                chosen = set(outcomes[0].result.task_ids)
                benchmark = benchmark.model_copy(
                    update={"tasks": tuple(t for t in benchmark.tasks if t.task_id in chosen)}
                )
            console.print(
                f"[bold]{configuration.label}[/]: {len(benchmark.tasks)} questions of {benchmark.name}"
                + (
                    f" ({len(benchmark.skipped)} skipped: database missing)"
                    if benchmark.skipped
                    else ""
                )
            )
            outcomes.append(run_configuration(configuration, benchmark))
            first = outcomes[0].sweep
            if len(outcomes) == 1 and first.left and sweep.budget_s is not None:
                line = budget_line(
                    first.resumed + first.answered,
                    first.total,
                    first.pace_s,
                    sweep.budget_s,
                    wanted=sweep.min_questions,
                )
                console.print(line, highlight=False)
    return outcomes


def main(argv: list[str] | None = None, prog: str = "scale-analytics eval") -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__)
        return 0
    multirun = any(a in ("-m", "--multirun") for a in argv)
    overrides = [a for a in argv if a not in ("-m", "--multirun")]
    console = Console(
        width=None if sys.stdout.isatty() else 200
    )  # logs and pipes: no 80-column wrap
    try:
        configurations = expand(overrides, load_config, multirun=multirun)
        report = shlex.join(["scale-analytics", "report", *report_overrides(overrides)])
        outcomes = run_all(configurations, console)
    except SweepInterrupted as exc:
        stop.say(f"{prog}: {exc}")
        return stop.exit_code()
    except KeyboardInterrupt:
        stop.say(
            f"{prog}: interrupted; finished questions are saved; rerun the same command to resume"
        )
        return stop.exit_code()
    except (
        EvalError,
        HydraException,
        ModelError,
        *user_errors(),
    ) as exc:  # bad input: one line on stderr
        return fail(prog, exc)
    print_summary(outcomes, console, configurations[0].baseline)
    if len(outcomes) > 1:
        console.print(f"Ablation table and plot: {escape(report)}", highlight=False)
    return 0
