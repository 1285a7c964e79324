// What the guest's runner withholds from every run and gives a case only when the case asks for it in its facts
// (facts.h: Facts::grants, each said why beside the case). `PROGRAM --list` prints them after the case's name;
// repro/guest/runner.cc grants them.
#pragma once

#include <string_view>

namespace sigwake {

// Kept in the root pass's capabilities: mounting (an overlay of one's own, debugfs). With it a run could undo its
// confinement (repro/guest/confine.h), so no case has it that does not mount.
inline constexpr std::string_view kGrantSysAdmin = "CAP_SYS_ADMIN";
// /proc/sysrq-trigger left writable: a stand-in that crashes the kernel on purpose (repro/tests/sysrq_crash.cc).
inline constexpr std::string_view kGrantSysrq = "sysrq-trigger";

}  // namespace sigwake
