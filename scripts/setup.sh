#!/usr/bin/env bash
# Installs every Debian package that the build, the tests and the tools need. Safe to run again:
# packages that are already installed are skipped, and apt is not called when nothing is missing.
#
#   ./scripts/setup.sh           the build, the tests and the tools
#   ./scripts/setup.sh --bench   also the benchmarks' peer libraries and plotting (bench/run.sh)
#   ./scripts/setup.sh --aarch64 also the ARM64 cross compiler and qemu-user (test-aarch64.sh)
#   ./scripts/setup.sh --sanitizers  also clang-14 with its sanitizer and libFuzzer runtimes
#                                (test-sanitizers.sh, fuzz.sh)
set -euo pipefail

packages=(
    build-essential cmake ninja-build pkg-config
    libhalide14-0-dev
    libgtest-dev libgmock-dev libbenchmark-dev
    libcli11-dev nlohmann-json3-dev libfmt-dev
    python3 python3-numpy
    # The Python module (python/, docs/python.md): built with pybind11 against Debian's
    # python3, reading torch tensors through DLPack's header; its tests compare with PyTorch.
    python3-dev pybind11-dev libdlpack-dev python3-pytest python3-torch
)

for arg in "$@"; do
    case "$arg" in
        --bench)
            # The peers of bench/attention_bench (OpenBLAS, oneDNN, libtorch) and matplotlib for
            # bench/make_results.py. Google Benchmark (libbenchmark-dev) is in the list above.
            # Debian's oneDNN was built with its OpenCL GPU runtime, so its CMake package
            # config calls find_package(OpenCL REQUIRED), yet libdnnl-dev does not depend on
            # the OpenCL development files: without ocl-icd-opencl-dev, configuring the bench
            # preset fails on a fresh machine ("Could NOT find OpenCL").
            packages+=(libopenblas-dev libdnnl-dev ocl-icd-opencl-dev libtorch-dev
                       python3-matplotlib)
            ;;
        --aarch64)
            # The cross toolchain (with its binutils, for checking the generated code) and the
            # user-mode emulator that runs the ARM64 tests.
            packages+=(g++-aarch64-linux-gnu binutils-aarch64-linux-gnu qemu-user)
            ;;
        --sanitizers)
            # clang-14 matches the LLVM that Halide 14 is built on; libclang-rt-14-dev holds the
            # AddressSanitizer, UBSan and libFuzzer runtimes.
            packages+=(clang-14 libclang-rt-14-dev)
            ;;
        *)
            echo "usage: $0 [--bench] [--aarch64] [--sanitizers]" >&2
            exit 2
            ;;
    esac
done

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "setup: all ${#packages[@]} packages already installed"
    exit 0
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo_cmd=(sudo)
fi

echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
