#!/usr/bin/env bash
# The device check of the CUDA kernels: on a machine with an NVIDIA GPU and its driver, runs the
# GPU tests (the whole correctness list through the kernels' CUDA entries, device pointers) and
# benchmarks cuda_fused and cuda_tiled against PyTorch's scaled_dot_product_attention (float32,
# math and memory-efficient backends, when PyTorch with CUDA is installed) on shapes (b), (c),
# (d) and (e) of the CPU benchmark, and writes a results table. Without a GPU every step still
# runs and says what it skipped.
#
#   tools/gpu_check.sh                 build (build/gpu), then check; the table goes to
#                                      build/gpu/gpu_results.md
#   tools/gpu_check.sh --pack DIR      build, then put what the check runs (test and benchmark
#                                      binaries, their non-system libraries) into DIR, for a GPU
#                                      machine without the build's Debian packages (~40 MB)
#   tools/gpu_check.sh --run DIR       check with a DIR made by --pack; the table goes to
#                                      DIR/gpu_results.md
#
# The build compiles the kernels for one CPU target (the CUDA kernels' CPU entries use the
# floor one anyway) to stay short; the ptxas check of every PTX module runs as a test of that
# build where ptxas exists. The check itself takes about two minutes on an H100-class machine
# and has a hard limit of 280 s, under the five minutes it must fit in.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
mode="all"
dir="$repo/build/gpu"
case "${1:-}" in
    --pack) mode="pack"; dir="$(realpath -m "${2:?--pack needs a directory}")" ;;
    --run) mode="run"; dir="$(realpath -m "${2:?--run needs a directory}")" ;;
    "") ;;
    *) echo "usage: $0 [--pack DIR | --run DIR]" >&2; exit 2 ;;
esac
start=$SECONDS

build() {
    cd "$repo"
    ./scripts/setup.sh
    # One CPU target keeps the build short; the CUDA kernels are on by default.
    cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTNGEN_CUDA=ON \
        -DATTNGEN_TARGETS=host
    cmake --build build/gpu -j "$(nproc)" --target runtime_test stages_test cuda_bench
    # The ptxas check needs only the kernel libraries (here, not on the GPU machine).
    ctest --test-dir build/gpu -R ptxas_accepts_every_cuda_kernel --output-on-failure
}

pack() {
    mkdir -p "$dir/lib"
    cp "$repo/build/gpu/tests/runtime_test" "$repo/build/gpu/tests/stages_test" \
        "$repo/build/gpu/bench/gpu/cuda_bench" "$dir/"
    cp "$repo/tools/gpu_check/torch_sdpa.py" "$repo/tools/gpu_check/make_table.py" "$dir/"
    # Libraries outside glibc and the C++ runtime (Google Benchmark) travel along.
    ldd "$dir/cuda_bench" "$dir/runtime_test" | awk '/=> \// {print $3}' |
        grep -Ev '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt)\.so' | sort -u |
        xargs -r cp -t "$dir/lib/"
    du -sh "$dir"
}

check() {
    local bin="$1" out="$2"
    export LD_LIBRARY_PATH="$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    if command -v nvidia-smi > /dev/null; then
        nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
    else
        echo "gpu_check: nvidia-smi not found: no NVIDIA GPU visible; the GPU tests will skip"
    fi
    local status=0
    # The whole correctness list runs the CUDA kernels' CUDA entries when a device is usable;
    # the CUDA tests report a skip with the reason when it is not.
    timeout 120 "$bin/runtime_test" --gtest_brief=1 || status=1
    timeout 60 "$bin/stages_test" --gtest_brief=1 --gtest_filter='*cuda*' || status=1
    timeout 60 "$bin/runtime_test" --gtest_filter='Cuda*' | grep -E 'SKIPPED|OK|FAILED' || true
    timeout 90 "$bin/cuda_bench" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
        --benchmark_min_time=0.1 --benchmark_out="$out/cuda_bench.json" \
        --benchmark_out_format=json || status=1
    timeout 60 python3 "$bin/torch_sdpa.py" > "$out/torch_sdpa.jsonl" || status=1
    python3 "$bin/make_table.py" "$out/cuda_bench.json" "$out/torch_sdpa.jsonl" \
        > "$out/gpu_results.md"
    cat "$out/gpu_results.md"
    echo "gpu_check: table in $out/gpu_results.md; check took $((SECONDS - start)) s"
    return "$status"
}

case "$mode" in
    all)
        build
        mkdir -p "$dir"
        pack > /dev/null
        check "$dir" "$dir"
        ;;
    pack)
        build
        pack
        ;;
    run) check "$dir" "$dir" ;;
esac
