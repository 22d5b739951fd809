"""The online endpoint (the top layer: it may import every other). Not built yet: the ``serve``
subcommand says so (``serve/cli.py``)."""
