#!/usr/bin/env bash
# A kernel added to the variant table is compiled, listed, dispatched and tuned with no other
# edit, and the tuner's database comes back into the build as correct kernels:
#   1. a build of attngen (its generators imported from the native build) from a table of
#      cpu_fused's generic kernel and one added row, a decode kernel for head dim 48 (each kernel
#      more in the table is a minute of CI on 2 cores: the test compiles its table twice);
#   2. `attngen list` names the added kernel and `attngen attention` on head dim 48 runs it;
#   3. `attngen tune` on a head-dim-48 decode shape tunes the added kernel's bucket (the table is
#      the only place its query bound of 4 comes from) and another bucket;
#   4. the same build with that database compiles the tuned kernels, and they and the added one
#      pass the runtime's correctness list (KernelTest; the added one is skipped when the tuner
#      kept other parameters for its own bucket, whose tuned kernel then takes all its calls).
#   variant_table_end_to_end.sh <source dir> <native build dir> [<budget in s>]
set -euo pipefail
source_dir="$1"
native_build="$2"
budget="${3:-24}"
work=$(mktemp -d)
trap '[ "${KEEP_WORK:-}" ] || rm -rf "$work"' EXIT
python=/usr/bin/python3

added="op:attention,mask:none,d_k:48,d_v:48,max_queries:4,schedule:cpu_fused"
# The same variant as the runtime writes it (every key that differs from its default, in order).
added_spec="op:attention,storage:f32,mask:none,d_k:48,d_v:48,max_queries:4,schedule:cpu_fused"
added_name=attention_f32_d48_q4_cpu_fused
cat > "$work/variants.txt" <<TABLE
op:attention,mask:none,schedule:cpu_fused
$added
TABLE
target=$("$source_dir/scripts/cpu-target.sh")
configure() {  # <tuning files>
    cmake -S "$source_dir" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DATTNGEN_TARGETS="$target" -DATTNGEN_VARIANT_TABLE="$work/variants.txt" \
        -DATTNGEN_TUNING_FILES="$1" -DATTNGEN_CUDA=OFF \
        -Dattngen-halide_generators_ROOT="$native_build/cmake" > "$work/configure.log" ||
        { tail -n 40 "$work/configure.log" >&2; exit 1; }
}
build() {  # <targets>
    cmake --build "$work/build" --target "$@" > "$work/build.log" ||
        { grep -A 20 -m 3 FAILED "$work/build.log" >&2; exit 1; }
}
configure ""
build attngen attngen-tune
attngen="$work/build/tools/attngen"

# Listed, and dispatched for a call it fits.
"$attngen" list > "$work/list.txt"
grep -q "^$added_name " "$work/list.txt" || { cat "$work/list.txt"; echo "$added_name not listed" >&2; exit 1; }
"$python" -c "import numpy as np; r = np.random.default_rng(0)
for n, s in [('q', (1, 2, 3, 48)), ('k', (1, 2, 100, 48)), ('v', (1, 2, 100, 48))]:
    np.save('$work/' + n + '.npy', r.standard_normal(s, dtype=np.float32))"
"$attngen" attention --q "$work/q.npy" --k "$work/k.npy" --v "$work/v.npy" --out "$work/o.npy" |
    tee "$work/run.txt"
grep -q "with kernel $added_name\$" "$work/run.txt" || { echo "the call did not run $added_name" >&2; exit 1; }

# Tuned: the bucket of a head-dim-48 decode shape is the added kernel's (its default is that
# kernel, and its query bound, 4, comes from the table row alone); a second bucket, grouped-query
# attention with head dim 24, has the generic kernel as its default.
# --min-speedup 0 keeps the fastest candidate other than the default even when a few seconds of
# search find nothing faster (on a busy machine they often do not): this test is about the path
# from the table to the database and back to compiled, correct kernels, not about the search
# finding a speedup.
"$attngen" tune --shapes "h=2,nq=3,nk=300,d=48" "h=4,kv=2,nq=256,d=24" --budget "$budget" \
    --no-autoschedulers --runs 5 --min-speedup 0 --out "$work/tuning.json" > "$work/tune.log"
cat "$work/tune.log"
"$python" - "$work/tuning.json" "$added_spec" <<'PY'
import json, sys
db = json.load(open(sys.argv[1]))
assert db["format"] == "attngen-tuning/2", db["format"]
defaults = [b["default"] for b in db["buckets"]]
assert sys.argv[2] in defaults, f"no bucket tuned against {sys.argv[2]}: {defaults}"
variants = [b["variant"] for b in db["buckets"]]
assert any("d_k:48,d_v:48,max_queries:4," in v for v in variants), variants
print("tuned buckets:", *variants, sep="\n  ")
PY

# The tuned kernels, compiled from the database, are in the registry (their names end in
# _t<hash of the parameters>_<schedule>) and each passes KernelTest, as does the added kernel.
configure "$work/tuning.json"
build kernel_list_test
tests=$("$work/build/tests/kernel_list_test" --gtest_list_tests --gtest_filter='Compiled/*') ||
    { echo "kernel_list_test could not list its tests" >&2; exit 1; }
echo "$tests" | grep -E '_t[0-9a-f]{6}_cpu_' || { echo "no tuned kernel in the build" >&2; exit 1; }
echo "$tests" | grep -q "$added_name" || { echo "$added_name has no KernelTest" >&2; exit 1; }
"$work/build/tests/kernel_list_test" --gtest_filter='Compiled/*'
