// KTAP output, as the kernel's selftests print it (Documentation/dev-tools/ktap.rst).
#pragma once

#include <string>
#include <vector>

#include "report.h"

namespace sigwake {

// A complete KTAP document for a reproducer's cases: header, plan, then per case
// its evidence as `# key=value` diagnostics, `# verdict=...`, and the result
// line with a SKIP or ERROR directive where one applies.
std::string ktap_document(const std::vector<Report>& reports);

}  // namespace sigwake
