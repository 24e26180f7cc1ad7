#!/usr/bin/env python3
"""Checks every PTX module embedded in generated CUDA kernels with NVIDIA's ptxas.

Halide embeds each CUDA kernel library's device code as PTX text in the host object: a
NUL-terminated string that starts with the PTX header. This script finds every such module in the
given object files or static libraries and assembles it with ptxas for each architecture asked
for, so that a schedule that produces PTX the real assembler rejects (too many registers or too
much shared memory for the architecture, bad instructions) fails the build's tests instead of a
user's first run on a GPU.

    check_ptx.py [--ptxas PATH] [--arch sm_80 --arch sm_90] FILE...

Exit status: 0 when every module assembles for every architecture, 1 when one does not, 2 when
no PTX was found in the files (a CUDA build that embeds none is broken), 77 when ptxas is missing
(ctest reports this as a skip with the message).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile


def ptx_modules(data):
    """Yields every NUL-terminated PTX module in data."""
    start = 0
    while True:
        at = data.find(b".version ", start)
        if at < 0:
            return
        begin = data.rfind(b"\0", 0, at) + 1
        end = data.find(b"\0", at)
        if end < 0:
            end = len(data)
        yield data[begin:end]
        start = end


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ptxas", default=None, help="ptxas to use (default: PATH, then /usr/local/cuda/bin)")
    parser.add_argument("--arch", action="append", default=None, help="GPU architecture, e.g. sm_90 (repeatable)")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    archs = args.arch or ["sm_80", "sm_90"]
    ptxas = args.ptxas or shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    if not os.access(ptxas, os.X_OK):
        print(f"check_ptx: SKIP: ptxas not found (looked on PATH and at {ptxas}); "
              "install the CUDA toolkit to validate the generated PTX", file=sys.stderr)
        return 77

    failures = 0
    modules = 0
    with tempfile.TemporaryDirectory() as work:
        for path in args.files:
            with open(path, "rb") as f:
                data = f.read()
            for n, ptx in enumerate(ptx_modules(data)):
                modules += 1
                ptx_path = os.path.join(work, f"{os.path.basename(path)}.{n}.ptx")
                with open(ptx_path, "wb") as f:
                    f.write(ptx)
                for arch in archs:
                    result = subprocess.run([ptxas, f"-arch={arch}", ptx_path, "-o", os.devnull],
                                            capture_output=True, text=True)
                    if result.returncode != 0:
                        failures += 1
                        print(f"check_ptx: FAIL {path} module {n} for {arch}:\n{result.stderr}",
                              file=sys.stderr)
    if modules == 0:
        print("check_ptx: no PTX found in " + " ".join(args.files), file=sys.stderr)
        return 2
    print(f"check_ptx: {modules} PTX modules from {len(args.files)} files, "
          f"{modules * len(archs) - failures} of {modules * len(archs)} assemblies passed "
          f"({', '.join(archs)})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
