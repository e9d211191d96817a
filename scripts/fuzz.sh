#!/usr/bin/env bash
# Fuzzes with libFuzzer, starting from a committed corpus. Three targets (FUZZ_TARGET):
#   protocol (default)  the request path (framing, JSON parsing, request decoding, replies): `cued-fuzz`
#                       runs `ProtocolFuzzing.run` (Tools/CueProtocolFuzzing/ProtocolFuzzing.swift);
#                       corpus Fuzz/corpus, dictionary Fuzz/protocol.dict
#   decode              the sniffers and decoders (MP3 with libmpg123; Ogg Vorbis/Opus and WAV with
#                       libsndfile; FLAC with libFLAC): `cued-fuzz-decode` runs `DecodeFuzzing.check`
#                       (Tools/cued-fuzz-decode); corpus Fuzz/decode-corpus. The C libraries are not
#                       instrumented: the fuzzer is guided by cued's own code, and any crash counts.
#   config              the config file's TOML parser (CueTOML): `cued-fuzz-config` runs
#                       `ConfigFuzzing.check` (Tools/cued-fuzz-config); corpus Fuzz/config-corpus,
#                       dictionary Fuzz/config.dict
#   canberra            the libcanberra driver's JSON lines (Sources/Plugins/CanberraCued/wire.c: the
#                       reader of cued's replies and events, and the writer of its requests):
#                       Tests/Canberra/wire-fuzz.c, built from the driver's own C source with clang
#                       -fsanitize=fuzzer,address,undefined (CLANG, default the one beside SWIFT, which
#                       ships libFuzzer); corpus Fuzz/canberra-corpus, dictionary Fuzz/canberra.dict
#
#   scripts/fuzz.sh [SECONDS]   build, then fuzz for SECONDS (default 60); `make fuzz FUZZ_SECONDS=…`
#   scripts/fuzz.sh --merge     add to the corpus the inputs of the finds directory that reach code
#                               the corpus does not (the smallest such inputs; review, then commit them)
#
# Inputs come from the corpus (read only) and the finds directory, $FUZZ_SCRATCH_PATH/fuzz-finds[-decode],
# where new inputs are written; it is kept between runs, so a later run resumes from what an earlier
# one found. A crash, trap, timeout (-timeout=5 s per input) or memory blow-up (2 GiB) stops the run,
# leaves the input in $FUZZ_SCRATCH_PATH/artifacts/ and exits non-zero; replay it with the binary the
# script names, or with `swift run cued-fuzz FILE` (the normal build is a replayer).
#
# Environment: SWIFT (default swift), FUZZ_SCRATCH_PATH (SwiftPM scratch path, default .build-fuzz;
# keep it apart from .build: the fuzzing flags rebuild every module they touch), FUZZ_JOBS (parallel
# workers, libFuzzer's -fork; default 1), FUZZ_BUILD_FLAGS (extra `swift build` flags),
# FUZZ_ARGS (extra libFuzzer flags, e.g. -seed=1).
set -euo pipefail
cd "$(dirname "$0")/.."

SWIFT="${SWIFT:-swift}"
scratch="${FUZZ_SCRATCH_PATH:-.build-fuzz}"
jobs="${FUZZ_JOBS:-1}"
case "${FUZZ_TARGET:-protocol}" in
  protocol) product=cued-fuzz; corpus=Fuzz/corpus; finds="$scratch/fuzz-finds"; max_len=131072
    dict=(-dict=Fuzz/protocol.dict) ;;
  decode) product=cued-fuzz-decode; corpus=Fuzz/decode-corpus; finds="$scratch/fuzz-finds-decode"; max_len=65536
    dict=() ;;
  config) product=cued-fuzz-config; corpus=Fuzz/config-corpus; finds="$scratch/fuzz-finds-config"; max_len=16384
    dict=(-dict=Fuzz/config.dict) ;;
  canberra) product=canberra-wire-fuzz; corpus=Fuzz/canberra-corpus; finds="$scratch/fuzz-finds-canberra"; max_len=4096
    dict=(-dict=Fuzz/canberra.dict) ;;
  *) echo "fuzz.sh: FUZZ_TARGET must be protocol, decode, config or canberra" >&2; exit 2 ;;
esac
artifacts="$scratch/artifacts"
mode=fuzz
seconds=60
case "${1:-}" in
  "") ;;
  --merge) mode=merge ;;
  *[!0-9]* | 0) echo "usage: scripts/fuzz.sh [SECONDS | --merge]" >&2; exit 2 ;;
  *) seconds="$1" ;;
esac
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: FUZZ_JOBS must be a positive number" >&2; exit 2; }

# Optimised, with the debug assertion level (-assert-config Debug): the standard library's bounds
# checks on unsafe buffers (the JSON parser reads through one) and `assert` stay on, which a plain
# release build drops, and it runs about 4 times as many inputs per second as a debug build.
# -DCUED_FUZZ swaps the replayer's main for LLVMFuzzerTestOneInput.
if [[ "$product" == canberra-wire-fuzz ]]; then
  # Plain C, as the driver is built (the Makefile's canberra target), with the sanitizers on.
  clang="${CLANG:-$(dirname "$(command -v "$SWIFT")")/clang}"
  [[ -x "$clang" ]] || clang=clang
  mkdir -p "$scratch"
  fuzzer="$scratch/$product"
  "$clang" -std=c11 -g -O1 -Wall -Wextra -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -o "$fuzzer" Tests/Canberra/wire-fuzz.c Sources/Plugins/CanberraCued/wire.c
else
  # shellcheck disable=SC2206  # FUZZ_BUILD_FLAGS is a list of flags
  build=(--scratch-path "$scratch" -c release --sanitize=fuzzer -Xswiftc -DCUED_FUZZ
    -Xswiftc -assert-config -Xswiftc Debug ${FUZZ_BUILD_FLAGS:-})
  "$SWIFT" build "${build[@]}" --product "$product"
  fuzzer="$("$SWIFT" build "${build[@]}" --show-bin-path)/$product"
fi
mkdir -p "$finds" "$artifacts"

# The Swift runtime's backtracer would take the trap's signal first and exit; libFuzzer must see it
# to save the input.
export SWIFT_BACKTRACE=enable=no

if [[ "$mode" == merge ]]; then
  before=$(find "$corpus" -type f | wc -l)
  # -use_counters=0: an input joins only for a new edge, not for a new hit count on a known one; that
  # keeps the committed corpus to about a hundred small files instead of a thousand.
  "$fuzzer" -merge=1 -use_counters=0 -max_len="$max_len" -timeout=5 -rss_limit_mb=2048 "$corpus" "$finds"
  after=$(find "$corpus" -type f | wc -l)
  echo "fuzz.sh: $corpus had $before inputs and has $after ($(cat "$corpus"/* | wc -c) bytes); review and commit the new ones"
  exit 0
fi

# -max_len: twice the 64 KiB line limit, so over-long lines and what follows them are generated.
# shellcheck disable=SC2206  # FUZZ_ARGS is a list of flags
args=("${dict[@]}" -max_len="$max_len" -timeout=5 -rss_limit_mb=2048 -max_total_time="$seconds"
  -artifact_prefix="$artifacts/" -print_final_stats=1 ${FUZZ_ARGS:-})
if [[ "$jobs" -gt 1 ]]; then args+=(-fork="$jobs"); fi
echo "fuzz.sh: fuzzing $product for ${seconds}s ($jobs job(s)); new inputs go to $finds, crashes to $artifacts/"
status=0
"$fuzzer" "${args[@]}" "$finds" "$corpus" || status=$?
if [[ $status -ne 0 ]]; then
  echo "fuzz.sh: the fuzzer stopped with status $status; the input is in $artifacts/:" >&2
  { ls -t "$artifacts" | head -n 5 | sed "s|^|  $artifacts/|" >&2; } || true
  echo "fuzz.sh: replay one with: SWIFT_BACKTRACE=enable=no $fuzzer FILE" >&2
  exit "$status"
fi
echo "fuzz.sh: no crash in ${seconds}s"
