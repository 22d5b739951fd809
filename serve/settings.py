"""The ``serve`` config section (``conf/serve/``): where the endpoint listens, what it serves, its
limits, cache and deployment shapes. Every default is here; YAML states only what differs.

    >>> s = ServeSettings(databases={"demo": "/data/claims.sqlite"})
    >>> s.host, s.port, s.default_profile
    ('127.0.0.1', 8000, 'balanced')
    >>> s.profiles["fast"]
    ('scaling=single_pass',)
"""

from __future__ import annotations

from pydantic import Field

from core.types import Frozen

Profile = str  # fast | balanced | thorough | agentic (the keys of ServeSettings.profiles)


class DeploymentShape(Frozen):
    """Replicas of one Serve deployment: fixed (``num_replicas``) or autoscaled between
    ``min_replicas`` and ``max_replicas`` when ``max_replicas`` is set."""

    num_replicas: int = Field(default=1, ge=1)
    min_replicas: int = Field(default=1, ge=0)
    max_replicas: int | None = Field(default=None, ge=1)
    target_ongoing_requests: float = Field(default=8, gt=0)
    max_ongoing_requests: int = Field(default=64, ge=1)
    num_cpus: float = Field(default=0, ge=0)  # the work is I/O: model servers and sandboxes

    def options(self) -> dict:
        """Keyword arguments of ``Deployment.options``."""
        opts: dict = {
            "max_ongoing_requests": self.max_ongoing_requests,
            "ray_actor_options": {"num_cpus": self.num_cpus},
        }
        if self.max_replicas is None:
            opts["num_replicas"] = self.num_replicas
        else:
            opts["autoscaling_config"] = {
                "min_replicas": self.min_replicas,
                "max_replicas": self.max_replicas,
                "target_ongoing_requests": self.target_ongoing_requests,
            }
        return opts


class KeySettings(Frozen):
    """Where API keys come from: ``SCALE_ANALYTICS_API_KEY`` (an admin key for every database)
    and/or a keys file (JSON, see ``serve/keys.py``). Keys are kept only as SHA-256 hashes."""

    env_var: str = "SCALE_ANALYTICS_API_KEY"
    file: str | None = None


class Limits(Frozen):
    """Per-request and per-key bounds. Rate and concurrency hold per ingress replica."""

    max_body_bytes: int = Field(default=64 * 1024, ge=1024)
    max_question_chars: int = Field(default=2000, ge=10)
    max_evidence_chars: int = Field(default=4000, ge=0)
    max_rows: int = Field(default=1000, ge=1)  # the most rows a caller may ask for
    default_rows: int = Field(default=100, ge=1)
    deadline_s: float = Field(default=300, gt=0)  # per request, the pipeline included
    rate_per_minute: int = Field(default=60, ge=1)  # per key; a burst of this many is allowed
    concurrency: int = Field(default=4, ge=1)  # requests in flight per key


class CacheSettings(Frozen):
    enabled: bool = True
    ttl_s: float = Field(default=3600, gt=0)


class ExplainSettings(Frozen):
    """The response agent: an LLM explanation checked against the result, else a template."""

    enabled: bool = True
    role: str = "critic"  # the model slot it uses (the cheap one where the config has one)
    max_tokens: int = Field(default=256, ge=16)
    rows_shown: int = Field(default=10, ge=1)  # result rows in its prompt


class ServeSettings(Frozen):
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    # Where the app sits on Serve's HTTP proxy; another prefix (e.g. /analytics) lets it share a
    # cluster's proxy with the Ray Serve LLM app (models/backends/vllm_serve.py), which takes /.
    route_prefix: str = Field(default="/", pattern=r"^/[A-Za-z0-9_/-]*$")
    # name -> SQLite (.sqlite/.sqlite3/.db) or DuckDB (.duckdb) file; more via the admin API
    databases: dict[str, str] = Field(default_factory=dict)
    # name -> a YAML or JSON file of that database's own solved questions: a postgresql://
    # database has none otherwise (a database file's beside it are found without it)
    examples: dict[str, str] = Field(default_factory=dict)
    # Where the state lives: registered databases, query cache, query log, traces (one SQLite
    # file, ``<state_dir>/serve.sqlite``); it survives restarts.
    state_dir: str = "runs/serve"
    # Register the embedded demo database (healthcare claims, built under paths.demo on first
    # use) as ``claims``.
    demo: bool = False
    default_profile: Profile = "balanced"
    # profile -> Hydra overrides composed on top of the command line's (a scaling group each)
    profiles: dict[Profile, tuple[str, ...]] = Field(
        default_factory=lambda: {
            "fast": ("scaling=single_pass",),
            "balanced": (),
            "thorough": ("scaling=default",),
            "agentic": ("scaling=agentic",),
        }
    )
    keys: KeySettings = KeySettings()
    limits: Limits = Limits()
    cache: CacheSettings = CacheSettings()
    explain: ExplainSettings = ExplainSettings()
    ingress: DeploymentShape = DeploymentShape()
    pipeline: DeploymentShape = DeploymentShape()
    sandbox_actors: int = Field(default=2, ge=1)  # the read-only sandbox pool (Ray actors)
    sandbox_num_cpus: float = Field(default=0.25, ge=0)
    index_on_register: bool = True  # build L0 indexes when a database is registered
