#!/usr/bin/env bash
# `swift test` that cannot pass silently: runs it with the arguments given, and fails unless the run
# ends with Swift Testing's summary line ("Test run with N tests in M suites passed") and N accounts
# for every test that `swift test list` finds for the same --filter and --skip. A test runner that
# exits 0 having run half the suite (a crash swallowed by a pipe, a hang cut short) fails here with
# the count it missed, and so does a --filter that no longer selects any test. When swift test's
# output lost its end (SwiftPM's relay, below), the summary is read from the test process's own
# xUnit report instead, and the run says so.
#
#   scripts/swift-test.sh [swift test arguments...]      `SWIFT=… scripts/swift-test.sh --skip-build …`
#
# Counting: `swift test list` prints every test as Module.Type/name(). swift test matches a
# --filter or --skip regular expression against more than that (a test's source location too: a
# filter naming SoundThemeTests also runs the other suites of SoundThemeTests.swift), so the count
# expected is a floor: the tests whose listed name a --filter matches, less those a --skip reaches
# by name or by the file under Tests/ that declares their type.
# Swift Testing's N counts a test disabled by its condition too; such a test prints
# "Test name() skipped: reason", and the closing line here says how many did.
set -uo pipefail
swift="${SWIFT:-swift}"

filters=()
skips=()
list_args=()
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --filter) filters+=("${args[i + 1]}"); i=$((i + 1)) ;;
    --filter=*) filters+=("${args[i]#--filter=}") ;;
    --skip) skips+=("${args[i + 1]}"); i=$((i + 1)) ;;
    --skip=*) skips+=("${args[i]#--skip=}") ;;
    --scratch-path | --sanitize) list_args+=("${args[i]}" "${args[i + 1]}"); i=$((i + 1)) ;;
    --scratch-path=* | --sanitize=* | -c | --configuration=*) list_args+=("${args[i]}") ;;
  esac
done

log=$(mktemp /tmp/cued-swift-test.XXXXXX)
report=$(mktemp -d /tmp/cued-swift-test-report.XXXXXX)
trap 'rm -rf "$log" "$report"' EXIT

# The test process's own xUnit report as well (Swift Testing writes it as RESULT-swift-testing.xml):
# SwiftPM relays the test process's output through a pipe of its own, and now and then it exits
# before relaying the last lines (the end of the run, its summary among them; seen with strace:
# the test process wrote them, `swift test` never printed them). The report is written by the test
# process itself, so it speaks for a run whose summary the relay lost.
"$swift" test "$@" --xunit-output "$report/result.xml" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
xunit="$report/result-swift-testing.xml"

# What the run should have held, from the same build.
listed=$("$swift" test list --skip-build "${list_args[@]}" 2>/dev/null) || {
  echo "swift-test.sh: 'swift test list' failed; cannot check the run's count" >&2
  exit $((status == 0 ? 1 : status))
}
# The tests a --skip may reach: by name, or by the file that declares their type.
reached() {
  local pattern="$1" file types
  grep -E -- "$pattern" <<<"$listed"
  while IFS= read -r file; do
    types=$(sed -nE 's/^(@[A-Za-z]+.*)?(public |final |private |fileprivate )*(struct|class|enum|extension) ([A-Za-z_][A-Za-z0-9_]*).*/\4/p' "$file" | sort -u | paste -sd'|')
    [[ -n "$types" ]] && grep -E -- "^[A-Za-z]+\.($types)/" <<<"$listed"
  done < <(find Tests -name '*.swift' | grep -E -- "$pattern")
}
selected=$listed
if ((${#filters[@]} > 0)); then
  selected=$(grep -E -- "$(IFS='|'; echo "${filters[*]}")" <<<"$listed" || true)
fi
if ((${#skips[@]} > 0)); then
  selected=$(comm -23 <(sort -u <<<"$selected") <(reached "$(IFS='|'; echo "${skips[*]}")" | sort -u))
fi
expected=$(grep -c . <<<"$selected" || true)
if ((expected == 0)); then
  echo "swift-test.sh: FAILED: no test is listed for this selection (${filters[*]:-every test}${skips:+, skipping ${skips[*]}})" >&2
  exit 1
fi

clean=$(sed 's/\x1b\[[0-9;]*m//g' "$log")
summary=$(grep -aE 'Test run with [0-9]+ tests? in ' <<<"$clean" | tail -1)
if [[ -z "$summary" && "$status" == 0 && -s "$xunit" ]]; then
  # The relay lost the end of the output: the test process's own report says how the run ended.
  read -r tests failures <<<"$(python3 - "$xunit" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
cases = {(c.get("classname"), c.get("name")) for s in suites for c in s.iter("testcase")}
# Failed tests: the suites' own counts, or the test cases marked failed if those say more.
counted = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
marked = sum(1 for s in suites for c in s.iter("testcase") if c.find("failure") is not None or c.find("error") is not None)
print(len(cases), max(counted, marked))
PY
)"
  echo "swift-test.sh: swift test's output ended before Swift Testing's summary (SwiftPM's relay lost its last lines); the test process's own report ($xunit) holds $tests tests, $failures failed"
  if ((failures == 0 && tests >= expected)); then
    summary="Test run with $tests tests in the test process's own report passed"
  fi
fi
if [[ -z "$summary" ]]; then
  echo "swift-test.sh: FAILED: swift test exited $status without Swift Testing's 'Test run with N tests' line ($expected tests expected)" >&2
  # What there is to know about a run that stopped talking: the last test it started, and what
  # the kernel said of its processes (a trap, the OOM killer) at the end.
  last=$(grep -aE '^◇ Test .* started' <<<"$clean" | tail -1)
  echo "swift-test.sh: the last test that started: ${last:-none}" >&2
  [[ -s "$xunit" ]] || echo "swift-test.sh: and the test process wrote no report of its own ($xunit)" >&2
  dmesg 2>/dev/null | tail -5 | sed 's/^/swift-test.sh: dmesg: /' >&2 || true
  exit $((status == 0 ? 1 : status))
fi
if ((status != 0)); then
  echo "swift-test.sh: swift test failed (exit $status): $summary"
  exit "$status"
fi
ran=$(sed -nE 's/.*Test run with ([0-9]+) tests? .*/\1/p' <<<"$summary")
skipped=$(grep -acE 'Test [^ ]+\) skipped' <<<"$clean" || true)
# A check a test leaves out under the conditions of this run (an idle-CPU check under a sanitizer)
# prints a line starting "◇ Check skipped:"; they are counted too.
checks=$(grep -acE '^◇ Check skipped:' <<<"$clean" || true)
if ((ran >= expected)); then
  echo "swift-test.sh: $ran tests run ($skipped of them skipped, each with its reason above; $checks checks left out, each said above), $expected listed for this selection"
  exit 0
fi
echo "swift-test.sh: FAILED: the run counted $ran tests but $expected are listed for this selection" >&2
exit 1
