// KTAP output, as the kernel's selftests print it (Documentation/dev-tools/ktap.rst).
#pragma once

#include <string>

#include "report.h"

namespace sigwake {

// A complete KTAP document for one reproducer: header, plan, evidence as
// `# key=value` diagnostics, `# verdict=...`, then the result line with a
// SKIP or ERROR directive where one applies.
std::string ktap_document(const Report& report);

}  // namespace sigwake
