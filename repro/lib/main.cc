// main() for every reproducer: runs reproduce(), prints KTAP, exits with kselftest codes.
#include <unistd.h>

#include <cstdio>
#include <exception>

#include "ktap.h"
#include "repro.h"

int main() {
  sigwake::Report report(sigwake::kReproName);
  try {
    sigwake::reproduce(report);
    if (report.verdict() == sigwake::Verdict::kNone) report.decide(sigwake::Verdict::kError, "no verdict reached");
  } catch (const sigwake::Unsupported& e) {
    report.decide(sigwake::Verdict::kUnsupported, e.what());
  } catch (const std::exception& e) {
    report.decide(sigwake::Verdict::kError, e.what());
  }
  const std::string text = sigwake::ktap_document(report);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  return sigwake::exit_code(report.verdict());
}
