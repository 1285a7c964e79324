#include "report.h"

#include <algorithm>

namespace sigwake {

const protocol::VerdictRule& rule(Verdict verdict) {
  for (const protocol::VerdictRule& r : protocol::kVerdictRules) {
    if (r.verdict == verdict) return r;
  }
  return rule(Verdict::kError);  // kNone: not decided is an error
}

std::string_view verdict_name(Verdict verdict) { return rule(verdict).word; }

int exit_code(Verdict verdict) { return rule(verdict).exit_code; }

int exit_code(const std::vector<Report>& reports) {
  bool all_skipped = !reports.empty();
  for (const Report& report : reports) {
    if (exit_code(report.verdict()) == 1) return 1;
    all_skipped = all_skipped && report.verdict() == Verdict::kUnsupported;
  }
  return all_skipped ? 4 : 0;
}

void Report::add(std::string key, std::string value) {
  // One diagnostic line per item: no line breaks may leak into the KTAP stream.
  std::replace(value.begin(), value.end(), '\n', ' ');
  evidence_.emplace_back(std::move(key), std::move(value));
}

void Report::decide(Verdict verdict, std::string reason) {
  verdict_ = verdict;
  reason_ = std::move(reason);
  std::replace(reason_.begin(), reason_.end(), '\n', ' ');
}

}  // namespace sigwake
