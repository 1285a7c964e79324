#include "ktap.h"

namespace sigwake {

std::string ktap_document(const std::vector<Report>& reports) {
  std::string out = "KTAP version 1\n1.." + std::to_string(reports.size()) + "\n";
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const Report& report = reports[i];
    for (const auto& [key, value] : report.evidence()) out += "# " + key + "=" + value + "\n";
    out += "# verdict=" + std::string(verdict_name(report.verdict())) + "\n";
    if (!report.reason().empty()) out += "# reason=" + report.reason() + "\n";

    const protocol::VerdictRule& r = rule(report.verdict());
    out += (r.ok ? "ok " : "not ok ") + std::to_string(i + 1) + " " + report.name();
    if (*r.directive != '\0') out += std::string(" # ") + r.directive + " " + report.reason();
    out += "\n";
  }
  return out;
}

}  // namespace sigwake
