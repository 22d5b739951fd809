"""``scale-analytics serve`` says the endpoint is not built rather than pretending to start one."""

from __future__ import annotations

from core.cli import _usage, main


def test_serve_says_the_endpoint_is_not_built(capsys):
    assert main(["serve", "serve.port=8000"]) == 2
    printed = capsys.readouterr()
    assert not printed.out
    assert printed.err.startswith("scale-analytics serve: the online endpoint is not built yet")


def test_the_help_says_so_too():
    assert "serve    the online Ray Serve endpoint (not built yet)" in _usage()
