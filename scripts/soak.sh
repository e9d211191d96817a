#!/usr/bin/env bash
# The soak test (docs/RELIABILITY.md): a release cued on the silent sink (--device null), driven by
# cued-soak through 100,000 one-shot plays, 10,000 connect/disconnect cycles and 1,000 player and
# 1,000 system-sound sessions, checking that after a warm-up its RSS grows by less than 1 MiB, its
# open descriptors and threads return to the baseline, and no voice, player, sound or client is
# left over. About 90 s on 2 cores.
#
#   scripts/soak.sh                   the full size (`make soak`)
#   scripts/soak.sh --quick           the short mode (5,000 plays, 500 cycles) that the tests run
#   scripts/soak.sh [cued-soak options]   e.g. --plays 1000000 --cycles 100000 for a longer soak
#
# Environment: SWIFT (default swift), SOAK_SCRATCH_PATH (SwiftPM scratch path, default .build-soak),
# SOAK_CONFIG (release or debug, default release), SOAK_VOICES (the daemon's --max-voices, default 256:
# cued-soak keeps three quarters of them sounding, so with the default 32 the full size takes ~13 min).
# The JSON summary goes to $SOAK_SCRATCH_PATH/soak-results.json, the daemon's log next to it. Exit
# status: cued-soak's (0 pass, 1 fail, 2 no daemon), or 1 when the daemon did not stop cleanly.
set -euo pipefail
cd "$(dirname "$0")/.."

SWIFT="${SWIFT:-swift}"
scratch="${SOAK_SCRATCH_PATH:-.build-soak}"
config="${SOAK_CONFIG:-release}"
voices="${SOAK_VOICES:-256}"

"$SWIFT" build -c "$config" --scratch-path "$scratch" --product cued
"$SWIFT" build -c "$config" --scratch-path "$scratch" --product cued-soak
bin=$("$SWIFT" build -c "$config" --scratch-path "$scratch" --show-bin-path)
results="$scratch/soak-results.json"
log="$scratch/soak-cued.log"

dir=$(mktemp -d /tmp/cued-soak-XXXXXX)
socket="$dir/cued.sock"
daemon=""
cleanup() {
  if [[ -n "$daemon" ]] && kill -0 "$daemon" 2>/dev/null; then kill -KILL "$daemon" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT

"$bin/cued" --no-config --sounds sounds --device null --socket "$socket" --realtime-priority 0 \
  --max-voices "$voices" >"$log" 2>&1 &
daemon=$!
for _ in $(seq 100); do
  [[ -S "$socket" ]] && break
  kill -0 "$daemon" 2>/dev/null || { cat "$log" >&2; echo "soak: cued exited at start" >&2; exit 1; }
  sleep 0.1
done

status=0
"$bin/cued-soak" --socket "$socket" --pid "$daemon" --json --progress 15 "$@" >"$results" || status=$?

kill -TERM "$daemon"
daemon_status=0
wait "$daemon" || daemon_status=$?
daemon=""
echo "soak: JSON summary in $results, the daemon's log in $log" >&2
if [[ $daemon_status -ne 0 ]]; then
  echo "soak: cued exited with status $daemon_status after the soak" >&2
  [[ $status -ne 0 ]] || status=1
fi
exit "$status"
