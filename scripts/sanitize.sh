#!/usr/bin/env bash
# The test suite under ThreadSanitizer or AddressSanitizer (with LeakSanitizer), docs/RELIABILITY.md.
#
#   scripts/sanitize.sh thread|address [FILTER...]   `make sanitize SANITIZER=thread [SANITIZE_FILTER=…]`
#
# Builds every product and the tests with --sanitize in their own scratch path (.build-tsan or
# .build-asan: the flag rebuilds every module), then runs `swift test --no-parallel` there, each
# FILTER as a `--filter` regular expression (none: the whole suite but SANITIZE_SKIP). The
# end-to-end tests spawn cued, cuectl and cued-soak from the same products directory,
# so the daemon and its tools are instrumented too.
#
# Every instrumented process, the test runner and each daemon and cuectl it starts, writes its
# reports to $SCRATCH/sanitizer-reports/<tsan|asan>.<program>.<pid> (log_path) instead of stderr,
# and exits with status 66 when it made one (exitcode): a daemon with a report fails the test
# that stops it, and a report in the runner fails `swift test`. After the run the script prints
# every report file and fails if there is one, whatever the tests said: that also catches
# processes whose exit status no test looks at. ThreadSanitizer goes on after a report (all of a
# run's races are collected); AddressSanitizer stops the process at its first. One gap: the daemon
# that SandboxTests runs inside bubblewrap sees the checkout read-only, so a report it made could
# not be written (the sanitizer says so on that daemon's stderr and exits).
#
# The allocation tests (Tests/CueCoreTests/AllocationTests.swift) are reported as skipped: their
# malloc interposer is left out under a sanitizer, whose runtime owns malloc.
#
# Environment:
#   SWIFT                  default swift
#   SANITIZE_SCRATCH_PATH  default .build-tsan / .build-asan
#   SANITIZE_SKIP          a `swift test --skip` regular expression. By default the install tests
#                          (they build and install uninstrumented release binaries, in .build) and
#                          the set-up tests (they run scripts/install-deps.sh and apt, no Swift code);
#                          under AddressSanitizer also the soak test (it judges RSS growth, and
#                          ASan's quarantine of freed memory grows RSS by ~150 MiB). Empty: run
#                          all. (The tests' idle-CPU checks see CUED_SANITIZER and are not made:
#                          TSan's runtime adds a thread to every process that wakes 10 times a
#                          second, and now and then a tick is charged to it.)
#   SANITIZE_BUILD_FLAGS   extra `swift build` flags
# Suppressions: scripts/tsan.supp (ThreadSanitizer) and scripts/lsan.supp (LeakSanitizer); each
# entry says why it is safe.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

usage() { echo "usage: scripts/sanitize.sh thread|address [SWIFT_TEST_FILTER...]" >&2; exit 2; }
[[ $# -ge 1 ]] || usage
sanitizer="$1"
shift
default_skip='InstallTests|SetupTests'
case "$sanitizer" in
  thread)
    short=tsan
    ;;
  address)
    short=asan
    default_skip+='|SoakTests'
    ;;
  *) usage ;;
esac

SWIFT="${SWIFT:-swift}"
scratch="${SANITIZE_SCRATCH_PATH:-.build-$short}"
skip="${SANITIZE_SKIP-$default_skip}"
case "$scratch" in
  /*) reports="$scratch/sanitizer-reports" ;;
  *) reports="$root/$scratch/sanitizer-reports" ;;
esac

filters=()
for filter in "$@"; do filters+=(--filter "$filter"); done
[[ -n "$skip" ]] && filters+=(--skip "$skip")

started=$SECONDS
# shellcheck disable=SC2206  # SANITIZE_BUILD_FLAGS is a list of flags
"$SWIFT" build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch" ${SANITIZE_BUILD_FLAGS:-}
built=$SECONDS

rm -rf "$reports"
mkdir -p "$reports"

# Reports name functions and lines only through llvm-symbolizer; the toolchain ships one.
symbolizer="$(dirname "$(command -v "$SWIFT")")/llvm-symbolizer"
options="log_path=$reports/$short:log_exe_name=1:exitcode=66"
[[ -x "$symbolizer" ]] && options+=":external_symbolizer_path=$symbolizer"
if [[ "$sanitizer" == thread ]]; then
  # atexit_sleep_ms=0: ThreadSanitizer otherwise sleeps a second in exit() whenever a thread other
  # than the exiting one is alive, to catch its late races. A daemon that follows the desktop's sound
  # settings keeps GLib's own threads (gmain, dconf's worker) to the end, so every exit would take
  # a second longer than the SIGTERM contract (ServiceTests). The races of those threads are in
  # GLib's uninstrumented code, which this sleep would not reveal anyway.
  export TSAN_OPTIONS="$options:halt_on_error=0:second_deadlock_stack=1:atexit_sleep_ms=0:suppressions=$root/scripts/tsan.supp"
else
  export ASAN_OPTIONS="$options:halt_on_error=1:detect_leaks=1:check_initialization_order=1:strict_init_order=1"
  export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:print_suppressions=0"
fi
# Tests that judge memory (the soak test's RSS growth) loosen their bounds under a sanitizer.
export CUED_SANITIZER="$sanitizer"
# The Swift runtime's backtracer would take a crash's signal before the sanitizer: let the
# sanitizer report it (into the report file, with its stack).
export SWIFT_BACKTRACE=enable=no

echo "sanitize.sh: swift test under the ${sanitizer} sanitizer; reports go to ${reports#"$root"/}${skip:+; skipping /$skip/}"
status=0
testlog="$scratch/sanitize-tests.log"
# The test binary is already instrumented (--skip-build needs no --sanitize); passed for clarity.
set +e
SWIFT="$SWIFT" scripts/swift-test.sh --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" --no-parallel "${filters[@]}" 2>&1 | tee "$testlog"
status=${PIPESTATUS[0]}
set -e

# A test that failed an expectation while no process made a report is run once more, on its own:
# this step is here for the sanitizer's reports, and a timing expectation that a 5-15x slower
# instrumented build misses once is not one (`make test` runs them all uninstrumented, without a
# second chance). Only named, non-parameterised tests and at most three; any report still fails.
shopt -s nullglob
found=("$reports"/*)
if ((status != 0 && ${#found[@]} == 0)); then
  mapfile -t failing < <(sed -nE 's/^✘ Test ([^ ]+) .*/\1/p' "$testlog" | grep -vx run | sort -u)
  mapfile -t failed < <(printf '%s\n' "${failing[@]}" | sed -nE 's/^([A-Za-z_][A-Za-z0-9_]*)\(\)$/\1/p')
  if ((${#failed[@]} > 0 && ${#failed[@]} <= 3 && ${#failed[@]} == ${#failing[@]})); then
    pattern=$(printf '/%s\\(|' "${failed[@]}")
    pattern=${pattern%|}
    echo "sanitize.sh: ${failed[*]} failed; running it once more on its own"
    if "$SWIFT" test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" --no-parallel --filter "$pattern"; then
      echo "sanitize.sh: WARNING: flaky under the $sanitizer sanitizer (failed, then passed alone): ${failed[*]}" >&2
      status=0
    fi
  fi
fi
tested=$SECONDS

found=("$reports"/*)
if ((${#found[@]} > 0)); then
  for file in "${found[@]}"; do
    echo
    echo "=== ${file#"$root"/} ==="
    cat "$file"
  done
  echo
  echo "sanitize.sh: ${#found[@]} process(es) made ${sanitizer} sanitizer reports (above, kept in ${reports#"$root"/})" >&2
  [[ $status -ne 0 ]] || status=1
fi
echo "sanitize.sh: ${sanitizer}: build $((built - started)) s, tests $((tested - built)) s; exit status $status"
exit "$status"
