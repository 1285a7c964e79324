#include "ktap.h"

namespace sigwake {

std::string ktap_document(const Report& report) {
  std::string out = "KTAP version 1\n1..1\n";
  for (const auto& [key, value] : report.evidence()) out += "# " + key + "=" + value + "\n";
  out += "# verdict=" + std::string(verdict_name(report.verdict())) + "\n";
  if (!report.reason().empty()) out += "# reason=" + report.reason() + "\n";

  const Verdict verdict = report.verdict();
  out += verdict == Verdict::kDelivered || verdict == Verdict::kUnsupported ? "ok 1 " : "not ok 1 ";
  out += report.name();
  if (verdict == Verdict::kUnsupported) out += " # SKIP " + report.reason();
  if (verdict == Verdict::kError || verdict == Verdict::kNone) out += " # ERROR " + report.reason();
  out += "\n";
  return out;
}

}  // namespace sigwake
