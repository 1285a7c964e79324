// PID 1 of the sigwake initramfs: mount the pseudo filesystems, run the case
// loop (case_loop.h) over every program in /repro, with its framed KTAP on the
// console, and power off. The token comes in /sigwake/token (mode 0400, in an
// archive the harness appends per boot), which init reads and unlinks before
// any reproducer runs: not on the command line, which every process (and dmesg)
// can read. Kernel command line:
//   sigwake.timeout_ms=N     per-reproducer deadline
//   sigwake.repeat=N         runs of each case per pass, at most
//   sigwake.agree=N          a case whose first N runs agree stops there
//   sigwake.passes=P,...     privilege passes, in order (default: all of them):
//                            root (perf's capabilities, under perf_event_paranoid
//                            2 at most), or user-paranoidN: uid 65534 with
//                            /proc/sys/kernel/perf_event_paranoid set to N
//   sigwake.mode=poweroff    report the uptime at /init and power off (bench)
//   sigwake.resume=P/PROG/C  leave out every run up to and including that one's
//                            (the fresh boot after a crash carries on past it)
//   sigwake.cases=C,...      only these cases, by name (run --case's globs, expanded)
// (keys and defaults: repro/protocol.json)
#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "../lib/kernel_path.h"
#include "case_loop.h"
#include "frame.h"
#include "loopback.h"
#include "printk_clock.h"
#include "protocol.h"

namespace {

constexpr const char* kReproDir = "/repro";
constexpr const char* kPeerDir = "/peer";  // the upstream selftests, when the harness packed them
constexpr int kConsoleLoglevel = 7;  // KERN_INFO and above

std::vector<std::string> programs_in(const char* directory) {
  std::vector<std::string> paths;
  if (DIR* dir = opendir(directory)) {
    while (dirent* entry = readdir(dir)) {
      if (entry->d_name[0] != '.') paths.push_back(std::string(directory) + "/" + entry->d_name);
    }
    closedir(dir);
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

void power_off(int console) {
  // The last frames leave the serial port before the kernel's poweroff messages, which would otherwise
  // land inside them (seen: "ACPI: PM: Preparing to enter system sleep state S5" inside a frame's token).
  // Not a tty (an unusual console): nothing to wait for, and nothing to do about it.
  (void)tcdrain(console);
  sync();
  reboot(RB_POWER_OFF);
  // Still here: exiting makes the kernel panic, and QEMU (-no-reboot) stops.
}

}  // namespace

int main() {
  if (getpid() != 1) {
    // It mounts filesystems and powers the machine off: never outside a guest.
    std::fputs("sigwake-init: runs only as PID 1 of a sigwake guest\n", stderr);
    return 2;
  }
  // Not dumpable: its memory (the token) is closed to every process without CAP_SYS_PTRACE, root's
  // reproducers included (the runner drops that capability for them).
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  mkdir("/dev", 0755);
  mkdir("/proc", 0555);
  mkdir("/sys", 0555);
  mkdir("/tmp", 01777);  // each run gets a tmpfs of its own there (confine.h)
  mount("devtmpfs", "/dev", "devtmpfs", 0, nullptr);  // EBUSY where the kernel mounted it already
  mount("proc", "/proc", "proc", 0, nullptr);
  mount("sysfs", "/sys", "sysfs", 0, nullptr);
  sigwake::bring_up_loopback();  // a case that finds it down says so (unsupported)

  // The boot prints notices and worse (loglevel=6 on the command line: the banner, a report at boot); from
  // here on every kernel message but debug reaches the console, so a hung-task report (KERN_INFO lines
  // follow its KERN_ERR head) is read whole.
  std::ofstream("/proc/sys/kernel/printk") << kConsoleLoglevel << "\n";
  // No keyboard SysRq (a uinput keyboard could type Alt+SysRq+0, the console's loglevel to 0), and no line the
  // kernel starts with a task's chosen name for its unhandled signal ("comm[pid]: segfault at ..."). Runs cannot
  // set either back (confine.h); /proc/sysrq-trigger ignores the first.
  std::ofstream("/proc/sys/kernel/sysrq") << "0\n";
  std::ofstream("/proc/sys/debug/exception-trace") << "0\n";
  const int console_fd = open("/dev/console", O_WRONLY | O_NOCTTY | O_CLOEXEC);
  const int out = console_fd >= 0 ? console_fd : STDOUT_FILENO;
  const std::string cmdline = sigwake::read_text("/proc/cmdline");
  const std::string token = sigwake::read_value(sigwake::protocol::kTokenFile);
  unlink(sigwake::protocol::kTokenFile);
  sigwake::FramedWriter line(out, token.empty() ? "unset" : token);

  const double uptime_s = std::atof(sigwake::read_text("/proc/uptime").c_str());
  utsname uts{};
  uname(&uts);
  line("KTAP version 1");
  line(sigwake::report_line(sigwake::protocol::kReportRelease, uts.release));
  line(sigwake::report_line(sigwake::protocol::kReportVersion, uts.version));  // when and how it was built: "#1 SMP ... (2026-10-12)"
  line(sigwake::report_line(sigwake::protocol::kReportInitUptimeMs, std::to_string(static_cast<long long>(uptime_s * 1000))));
  namespace protocol = sigwake::protocol;
  if (sigwake::option_value(cmdline, protocol::kKeyMode, "run") == "poweroff") {
    line("1..0 # SKIP poweroff mode");
    line(sigwake::report_line(protocol::kReportDone, "0"));
    power_off(out);
    return 1;
  }

  sigwake::LoopConfig config;
  config.programs = programs_in(kReproDir);
  config.peers = programs_in(kPeerDir);
  config.budget = std::chrono::milliseconds(
      sigwake::positive_or(sigwake::option_value(cmdline, protocol::kKeyTimeoutMs, ""), protocol::kDefaultTimeoutMs));
  config.peer_budget = std::chrono::milliseconds(protocol::kDefaultPeerTimeoutMs);  // kselftest: 30 s a test
  config.repeat = sigwake::positive_or(sigwake::option_value(cmdline, protocol::kKeyRepeat, ""), protocol::kDefaultRepeat);
  config.agree = sigwake::positive_or(sigwake::option_value(cmdline, protocol::kKeyAgree, ""), protocol::kDefaultAgree);
  config.resume_after = sigwake::option_value(cmdline, protocol::kKeyResume, "");
  const std::string cases = sigwake::option_value(cmdline, protocol::kKeyCases, "");
  if (!cases.empty()) config.cases = sigwake::split(cases, ',');
  config.confined = true;
  sigwake::PrintkClock printk_clock;
  config.printk_clock = [&printk_clock] { return printk_clock.mark(); };
  if (!printk_clock.readable()) {
    line(sigwake::report_line(protocol::kReportWarning, "no /dev/kmsg to read: the kernel's records are not read, so "
                                                          "a kernel line that continues one cannot be told from a report"));
  }
  config.lava = sigwake::LavaTable::parse(sigwake::read_text(protocol::kLavaFile), uts.release);  // a LAVA job's
  config.passes = sigwake::parse_passes(sigwake::option_value(cmdline, protocol::kKeyPasses, protocol::kAllPasses),
                                        std::ref(line));  // by reference: one sequence of frames
  sigwake::PassHooks hooks;
  hooks.enter = [](const sigwake::Pass& pass) {
    // Above 2 (Debian's 3) the kernel asks CAP_SYS_ADMIN for every event, which a run is not given (runner.cc):
    // the root pass runs at upstream's most paranoid level, where perf asks CAP_PERFMON.
    const bool lower = pass.paranoid.empty() && std::atoi(sigwake::read_value(sigwake::kParanoidSysctl).c_str()) > 2;
    const std::string paranoid = lower ? "2" : pass.paranoid;
    if (!paranoid.empty()) std::ofstream(sigwake::kParanoidSysctl) << paranoid << "\n";
  };
  sigwake::KernelPathTracer tracer;  // root's, so it follows every pass
  sigwake::run_cases(config, hooks, &tracer, std::ref(line));
  power_off(out);
  return 1;
}
