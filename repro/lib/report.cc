#include "report.h"

#include <algorithm>

namespace sigwake {

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kDelivered: return "delivered";
    case Verdict::kNotDelivered: return "not-delivered";
    case Verdict::kMisdelivered: return "misdelivered";
    case Verdict::kNoWakeup: return "no-wakeup";
    case Verdict::kNoRecord: return "no-record";
    case Verdict::kUnsupported: return "unsupported";
    case Verdict::kMeasured: return "measured";
    case Verdict::kWrongCount: return "wrong-count";
    case Verdict::kError:
    case Verdict::kNone: return "error";
  }
  return "error";
}

int exit_code(Verdict verdict) {
  switch (verdict) {
    case Verdict::kDelivered:
    case Verdict::kMeasured: return 0;
    case Verdict::kUnsupported: return 4;
    default: return 1;
  }
}

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
