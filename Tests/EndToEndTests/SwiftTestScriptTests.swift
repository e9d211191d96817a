import DaemonTestSupport
import Foundation
import Testing

/// scripts/swift-test.sh, which every `make test` pass goes through, judged on a stand-in for
/// `swift` (SWIFT=…): a pass passes only when it says it ran every test listed for its selection,
/// in its summary line or, when SwiftPM's relay lost that line, in the test process's own report.
@Suite("swift-test.sh: a pass that cannot pass silently")
struct SwiftTestScriptTests {
  /// How the stand-in's `swift test` run ends.
  enum Run: String, CaseIterable, CustomTestStringConvertible {
    case whole, shortSummary, lostSummary, lostSummaryWithAFailure, lostSummaryShortReport, lostSummaryNoReport, failed
    var testDescription: String { rawValue }
  }

  /// A `swift` whose `test list` lists three tests and whose `test` ends as `CUED_FAKE_RUN` says,
  /// writing its xUnit report where `--xunit-output` asks (RESULT-swift-testing.xml, as Swift Testing does).
  static let standIn: String = {
    let path = Harness.temporaryDirectory() + "/swift"
    let script = #"""
      #!/usr/bin/env bash
      if [[ "$1 $2" == "test list" ]]; then printf 'Suite.One/a()\nSuite.One/b()\nSuite.Two/c()\n'; exit 0; fi
      xunit=""
      while (($#)); do [[ "$1" == --xunit-output ]] && xunit="$2"; shift; done
      report() {
        { echo '<?xml version="1.0" encoding="UTF-8"?><testsuites><testsuite name="TestResults" errors="0" tests="'$1'" failures="'$2'" skipped="0" time="0.1">'
          for name in "${@:3}"; do echo "<testcase classname=\"Suite.One\" name=\"$name\" time=\"0.01\"/>"; done
          echo '</testsuite></testsuites>'; } > "${xunit%.xml}-swift-testing.xml"
      }
      echo '◇ Test run started.'
      echo '◇ Test a() started.'
      case "$CUED_FAKE_RUN" in
        whole) report 3 0 'a()' 'b()' 'c()'; echo '✔ Test run with 3 tests in 2 suites passed after 0.1 seconds.' ;;
        shortSummary) report 2 0 'a()' 'b()'; echo '✔ Test run with 2 tests in 1 suite passed after 0.1 seconds.' ;;
        lostSummary) report 3 0 'a()' 'b()' 'c()' ;;
        lostSummaryWithAFailure) report 3 1 'a()' 'b()' 'c()' ;;
        lostSummaryShortReport) report 2 0 'a()' 'b()' ;;
        lostSummaryNoReport) ;;
        failed) report 3 1 'a()' 'b()' 'c()'; echo '✘ Test run with 3 tests in 2 suites failed after 0.1 seconds with 1 issue.'; exit 1 ;;
      esac
      exit 0
      """#
    try! script.write(toFile: path, atomically: true, encoding: .utf8)
    chmod(path, 0o755)
    return path
  }()

  static func script(_ run: Run, _ arguments: [String] = []) throws -> CommandResult {
    try DaemonTestSupport.run(
      Harness.repositoryRoot + "/scripts/swift-test.sh", ["--skip-build"] + arguments,
      environment: ["SWIFT": standIn, "CUED_FAKE_RUN": run.rawValue], timeout: 30)
  }

  @Test(arguments: Run.allCases) func aPassPassesOnlyWhenItAccountsForEveryTestListed(_ run: Run) throws {
    let result = try Self.script(run)
    let output = result.stdout + result.stderr
    switch run {
    case .whole:
      #expect(result.status == 0, "\(output)")
      #expect(output.contains("swift-test.sh: 3 tests run"), "\(output)")
    case .lostSummary:
      #expect(result.status == 0, "\(output)")
      #expect(output.contains("the test process's own report") && output.contains("holds 3 tests, 0 failed"), "\(output)")
    case .shortSummary:
      #expect(result.status == 1, "\(output)")
      #expect(output.contains("FAILED: the run counted 2 tests but 3 are listed"), "\(output)")
    case .lostSummaryWithAFailure, .lostSummaryShortReport:
      #expect(result.status == 1, "\(output)")
      #expect(output.contains("FAILED: swift test exited 0 without Swift Testing's 'Test run with N tests' line (3 tests expected)"), "\(output)")
      #expect(output.contains("the last test that started: ◇ Test a() started."), "\(output)")
    case .lostSummaryNoReport:
      #expect(result.status == 1, "\(output)")
      #expect(output.contains("wrote no report of its own"), "\(output)")
    case .failed:
      #expect(result.status == 1, "\(output)")
      #expect(output.contains("swift test failed (exit 1)"), "\(output)")
    }
  }

  @Test func aFilterThatSelectsNoTestFails() throws {
    let result = try Self.script(.whole, ["--filter", "NoSuchSuite"])
    #expect(result.status == 1)
    #expect(result.stderr.contains("FAILED: no test is listed for this selection (NoSuchSuite)"), "\(result.stderr)")
  }

  @Test func aFilterCountsOnlyTheTestsItSelects() throws {
    // Suite.One holds two of the three: a run of two with that filter is whole.
    let result = try Self.script(.shortSummary, ["--filter", "Suite.One"])
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("2 tests run") && result.stdout.contains("2 listed for this selection"), "\(result.stdout)")
  }
}
