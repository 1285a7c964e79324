// The init of a guest whose kernel reports one thing on purpose, for the golden kernel reports
// (bench/golden_reports.py, harness/tests/data/kernel-reports/README.md). It asks lkdtm
// (drivers/misc/lkdtm) for the crash type its command line names (sigwake.lkdtm=TYPE) from a
// child, whom an Oops may kill where init must live on; it then gives the kernel's delayed
// reports (a hung task, a soft lockup, a stall) sigwake.wait seconds, and powers off. Without a
// type it prints the types this kernel's lkdtm knows.
#include <fcntl.h>
#include <poll.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace {

constexpr const char* kDirect = "/sys/kernel/debug/provoke-crash/DIRECT";

std::string read_all(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string option(const std::string& cmdline, const std::string& key) {
  const std::size_t at = cmdline.find(key + "=");
  if (at == std::string::npos) return "";
  const std::size_t from = at + key.size() + 1;
  return cmdline.substr(from, cmdline.find_first_of(" \n", from) - from);
}

void say(const std::string& what) {
  std::printf("sigwake-golden: %s\n", what.c_str());
  std::fflush(stdout);
}

// The detectors' shortest thresholds, so a hung task and a soft lockup are reported within the wait.
void write_sysctl(const char* path, const char* value) {
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, value, std::strlen(value)) < 0) say(std::string("cannot set ") + path + ": " + std::strerror(errno));
  if (fd >= 0) close(fd);
}

[[noreturn]] void power_off() {
  sync();
  reboot(RB_POWER_OFF);
  _exit(1);
}

}  // namespace

int main() {
  mount("proc", "/proc", "proc", 0, nullptr);
  mount("sysfs", "/sys", "sysfs", 0, nullptr);
  mount("debugfs", "/sys/kernel/debug", "debugfs", 0, nullptr);
  const std::string cmdline = read_all("/proc/cmdline");
  const std::string type = option(cmdline, "sigwake.lkdtm");
  const int wait_s = std::atoi(option(cmdline, "sigwake.wait").c_str());
  if (type.empty()) {
    std::string types = read_all(kDirect);  // lkdtm answers a read with "Available crash types:" and one a line
    for (char& c : types) c = c == '\n' ? ' ' : c;
    say("types " + types);
    power_off();
  }
  write_sysctl("/proc/sys/kernel/hung_task_timeout_secs", "2");
  write_sysctl("/proc/sys/kernel/watchdog_thresh", "1");
  say("provoking " + type);
  const pid_t child = fork();
  if (child == 0) {
    const int fd = open(kDirect, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, type.c_str(), type.size()) < 0) say("lkdtm refused " + type + ": " + std::strerror(errno));
    _exit(0);
  }
  if (child < 0) say(std::string("fork: ") + std::strerror(errno));
  // Waits for the child or the deadline, whichever comes first: a child lkdtm hangs must not hold the boot.
  const int pidfd = child > 0 ? static_cast<int>(syscall(SYS_pidfd_open, child, 0)) : -1;
  pollfd ended{.fd = pidfd, .events = POLLIN, .revents = 0};
  if (pidfd >= 0 && poll(&ended, 1, 1000 * wait_s) == 1) {
    int status = 0;
    waitpid(child, &status, 0);
    say(WIFSIGNALED(status) ? "the child was killed by signal " + std::to_string(WTERMSIG(status)) : "the child exited");
    poll(nullptr, 0, 1000 * wait_s);  // the reports a kernel prints later (a stall, a deferred free)
  }
  say("done");
  power_off();
}
