// A run's view of the guest: the kernel's word reaches the console only from the kernel, and nothing a run does
// outlasts it. In a mount namespace of its own a run finds
//  - a /dev with only what cases open: no console, serial port or /dev/kmsg, and no CAP_MKNOD to make one;
//  - /proc/sys read-only but for the two perf sysctls cases set (lib/sysctl.h): no console loglevel, no
//    core_pattern or modprobe (a helper the kernel would run with every capability), no perf_event_paranoid;
//  - /proc/sysrq-trigger and /sys read-only (the printk module's parameters, a uevent helper);
//  - the root filesystem read-only (the programs after it are not its to rewrite), and a /tmp of its own.
// Without CAP_SYS_ADMIN (runner.cc) it cannot undo this; a case granted CAP_SYS_ADMIN could, and says why beside
// it (lib/grants.h). The keyboard's SysRq is off for every run: init sets kernel.sysrq to 0.
#pragma once

#include <string>

namespace sigwake {

// In the run's child, before it drops privileges. Returns what failed ("": confined).
std::string confine(bool sysrq_trigger);

}  // namespace sigwake
