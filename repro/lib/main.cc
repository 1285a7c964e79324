// main() for every reproducer: runs its cases in order, prints one KTAP
// document, exits with kselftest codes (1 if any case failed or erred, 4 if
// every case was skipped, else 0).
#include <cstdio>
#include <exception>
#include <vector>

#include "ktap.h"
#include "repro.h"

namespace sigwake {

std::vector<Case>& registered_cases() {
  static std::vector<Case> cases;
  return cases;
}

}  // namespace sigwake

int main() {
  std::vector<sigwake::Report> reports;
  for (const sigwake::Case& c : sigwake::registered_cases()) {
    sigwake::Report& report = reports.emplace_back(c.name);
    try {
      c.run(report);
      if (report.verdict() == sigwake::Verdict::kNone) report.decide(sigwake::Verdict::kError, "no verdict reached");
    } catch (const sigwake::Unsupported& e) {
      report.decide(sigwake::Verdict::kUnsupported, e.what());
    } catch (const std::exception& e) {
      report.decide(sigwake::Verdict::kError, e.what());
    }
  }
  const std::string text = sigwake::ktap_document(reports);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  return sigwake::exit_code(reports);
}
