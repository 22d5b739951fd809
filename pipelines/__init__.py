"""The query pipeline. ``pipelines.build_pipeline`` is imported lazily (it pulls in the model
layer), so ``import pipelines.contracts`` stays cheap."""


def __getattr__(name: str):
    if name == "build_pipeline":
        from pipelines.factory import build_pipeline

        return build_pipeline
    raise AttributeError(f"module 'pipelines' has no attribute {name!r}")
