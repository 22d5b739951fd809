"""``scale-analytics serve``: the online Ray Serve endpoint, which is not built yet.

The subcommand keeps its name so the command line stays the same when the endpoint lands; until
then it says so on stderr and exits with code 2, whatever the arguments.
"""

from __future__ import annotations

import sys

EXIT_NOT_BUILT = 2


def main(argv: list[str]) -> int:
    print(
        "scale-analytics serve: the online endpoint is not built yet. Answer one question with "
        "`scale-analytics ask`, or a benchmark with `scale-analytics eval`.",
        file=sys.stderr,
    )
    return EXIT_NOT_BUILT
