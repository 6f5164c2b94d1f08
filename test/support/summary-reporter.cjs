// Prints one plain closing line, `N passed, N failed, N skipped`, which CI reads whatever the runner.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const failedSuites = results.numFailedTestSuites + results.numRuntimeErrorTestSuites;
    process.stdout.write(
      `\n${results.numPassedTests} passed, ${results.numFailedTests + (failedSuites && !results.numFailedTests ? failedSuites : 0)} failed, ${results.numPendingTests} skipped\n`,
    );
  }
}
module.exports = SummaryReporter;
