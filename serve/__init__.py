"""The online endpoint (the top layer: it may import every other): ``scale-analytics serve``
starts a Ray Serve application, an HTTP ingress over a pipeline deployment (``serve/app.py``);
docs/serve.md describes the API, its keys and limits, the query cache and the web page."""
