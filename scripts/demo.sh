#!/usr/bin/env bash
# The main job on its built-in default: set up, build, then run self-, cross- and causal
# multi-head attention with every compiled schedule, check each output against the fp64
# reference and print the time per schedule.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/build.sh release
./build/release/tools/attngen demo "$@"
