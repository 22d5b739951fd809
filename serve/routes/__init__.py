"""The endpoint's routes, one router per concern, in the order ``build_api`` includes them:

==============  =====================================================================
``query``       ``POST /v1/query``, ``POST /v1/query/stream``: asking
``databases``   ``GET``/``POST /v1/databases``, ``DELETE /v1/databases/NAME``
``answers``     ``GET /v1/traces/{id}``, ``POST /v1/queries/{id}/feedback``
``health``      ``GET /healthz``, ``GET /readyz``
``page``        ``GET /``: the web page
==============  =====================================================================

What they share (``context.ApiContext``) lives on ``app.state.api``; ``bodies`` reads and checks
JSON bodies, ``errors`` turns every refusal into ``{"error": {"code", "message"}}``, and
``answer_cache`` keeps the answer cache and the query log.
"""

from serve.routes import answers, databases, health, page, query

ROUTERS = (query.router, databases.router, answers.router, health.router, page.router)
