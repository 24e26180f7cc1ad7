# Cross-compiles attngen for 64-bit ARM Linux with Debian's g++-aarch64-linux-gnu, and runs the
# resulting tests under qemu-aarch64 (Debian's qemu-user).
#
# Halide generators run on the build machine: pass the CMake package that a native build of
# attngen exports, e.g.
#   cmake -S . -B build/aarch64 --toolchain cmake/toolchains/aarch64-linux-gnu.cmake \
#         -Dattngen-halide_generators_ROOT=build/release/cmake
# (scripts/test-aarch64.sh does all of this).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Libraries and headers come from the ARM64 sysroot; CMake packages may also come from the
# build machine, for Halide's (its helpers and runtime headers are architecture-neutral) and
# the header-only ones.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# ctest runs every test binary through the emulator, with the ARM64 sysroot for its loader.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)

# Debian installs Halide's CMake package under the build machine's multiarch directory, which a
# search for ARM64 packages does not visit.
set(Halide_DIR /usr/lib/x86_64-linux-gnu/cmake/Halide14 CACHE PATH "Halide's CMake package")
set(HalideHelpers_DIR /usr/lib/x86_64-linux-gnu/cmake/HalideHelpers14 CACHE PATH
    "Halide's CMake helpers")
