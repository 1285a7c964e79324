// A reproducer that tries to forge the guest's console frames and the kernel's
// word. Case forge: it looks for the boot token where a process could find it
// (the command line, the token file, PID 1's memory) and for a way onto the
// console (its stdin, /dev/console, /dev/ttyS0), and writes a frame with a
// far-ahead sequence number wherever it can; it tries to write a kernel report
// into /dev/kmsg (or a /dev/kmsg of its own), to lower the console's loglevel
// (syslog(2), /proc/sys/kernel/printk, sysrq), to redirect the console to itself
// (TIOCCONS), to write core_pattern, perf_event_paranoid or a program beside
// ours, to give itself CAP_SYS_ADMIN (its listing asks), to have the kernel print
// a report-shaped task name (a child named "UBSAN: ..." segfaults) or a report's
// line inside one of its records (an exec'd path with newlines) and to undo its
// confinement (umount /dev). Case outlive: it leaves a daemon running. It
// reports what it managed; the guest's real frames and reports must survive it.
#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <sys/io.h>
#endif

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace {

std::string token_in(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  const std::string key = "sigwake.token=";
  const auto at = all.find(key);
  if (at != std::string::npos) return all.substr(at + key.size(), all.find_first_of(" \n", at) - at - key.size());
  return std::string(path) == "/sigwake/token" ? all.substr(0, all.find('\n')) : "";
}

bool is_console(int fd) {
  struct stat st {};
  return fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && (major(st.st_rdev) == 5 || major(st.st_rdev) == 4);
}

// Whether `port` takes an access (a child tries; without a grant it is killed): only evdev_sigio is granted
// the keyboard controller's ports before exec, and no program the serial console's.
bool port_open(bool write, unsigned short port) {
#if defined(__x86_64__)
  const pid_t child = fork();
  if (child == 0) {
    if (write) {
      outb(0, port);
    } else {
      (void)inb(port);
    }
    _exit(0);
  }
  int status = 0;
  return child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
#else
  return false;
#endif
}

// Whether a kernel report reached /dev/kmsg: the device, or one made (CAP_MKNOD) where the run may write.
bool kmsg_written() {
  const std::string report = "<4>WARNING: CPU: 0 PID: 1 at forged_kmsg+0x1/0x2\n";
  int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
  if (fd < 0 && mknod("/dev/forged-kmsg", S_IFCHR | 0600, makedev(1, 11)) == 0) {
    fd = open("/dev/forged-kmsg", O_WRONLY | O_CLOEXEC);
  }
  return fd >= 0 && write(fd, report.data(), report.size()) == static_cast<ssize_t>(report.size());
}

// Whether a root-owned file took a write: of the value it holds, so no harm is done when it does.
bool rewrote(const char* path) {
  std::string value;
  std::getline(std::ifstream(path), value);
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  return fd >= 0 && write(fd, value.data(), value.size()) > 0;
}

// Whether the console's loglevel took a change (each way put back at once, if one did).
bool loglevel_changed() {
  constexpr int kConsoleLevel = 8;  // SYSLOG_ACTION_CONSOLE_LEVEL
  bool changed = klogctl(kConsoleLevel, nullptr, 1) == 0;
  if (changed) klogctl(kConsoleLevel, nullptr, 7);
  changed = changed || rewrote("/proc/sys/kernel/printk");
  const int sysrq = open("/proc/sysrq-trigger", O_WRONLY | O_CLOEXEC);  // '7' would set the loglevel
  return changed || sysrq >= 0;
}

// Whether the console could be redirected to a tty of ours: TIOCCONS on any tty we can open, devpts mounted first.
bool console_redirected() {
  mkdir("/dev/pts", 0755);
  mount("devpts", "/dev/pts", "devpts", 0, "ptmxmode=0666");  // only with CAP_SYS_ADMIN
  const int master = open("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  int unlock = 0;
  std::string slave;
  if (master >= 0 && ioctl(master, TIOCSPTLCK, &unlock) == 0) {
    int number = -1;
    if (ioctl(master, TIOCGPTN, &number) == 0) slave = "/dev/pts/" + std::to_string(number);
  }
  for (const std::string& path : {slave, std::string("/dev/console"), std::string("/dev/tty"), std::string("/dev/ttyS0")}) {
    const int fd = path.empty() ? -1 : open(path.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd >= 0 && ioctl(fd, TIOCCONS) == 0) return true;
  }
  return false;
}

// Whether a root-owned knob or file outside its run took a write: the kernel's core_pattern (a helper it would
// run with every capability), perf_event_paranoid (the next runs' rules), a new program beside ours.
bool machine_written() {
  const bool written = rewrote("/proc/sys/kernel/core_pattern") || rewrote("/proc/sys/kernel/perf_event_paranoid");
  const int program = open("/repro/forged", O_WRONLY | O_CREAT | O_CLOEXEC, 0755);
  return written || program >= 0;
}

// Whether CAP_SYS_ADMIN is ours: our listing asks for it, which only a reviewed program is granted.
bool has_sys_admin() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("CapEff:", 0) == 0) return (std::stoull(line.substr(7), nullptr, 16) >> 21) & 1;
  }
  return false;
}

// A child named like a report's first line, killed by SIGSEGV: the kernel would print "<comm>[<pid>]: segfault
// at 0 ..." (with debug.exception-trace on). Returns whether it died so.
bool report_named_segfault() {
  const pid_t child = fork();
  if (child == 0) {
    prctl(PR_SET_NAME, "UBSAN: a in b", 0, 0, 0);
    *static_cast<volatile int*>(nullptr) = 0;
    _exit(0);
  }
  int status = 0;
  return child > 0 && waitpid(child, &status, 0) == child && WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
}

// Whether the kernel took an exec, with no argv, of a path that holds a report's first line inside its first
// line and another between newlines. It prints the path in one record ("process 'forge' launched '<path>' with
// NULL argv", once a boot), which the console shows as lines of their own, each behind the record's timestamp.
bool exec_newline_report() {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return false;
  self[n] = '\0';
  // Each '/' of the lines is a folder's end; the last part is the link's name.
  const std::string outer = "/tmp/WARNING: CPU: 0 PID: 1 at forged_inline+0x1";
  const std::string inner = outer + "/0x2\nWARNING: CPU: 0 PID: 1 at forged_exec+0x1";
  const std::string path = inner + "/0x2\n";
  for (const std::string& folder : {outer, inner}) {
    if (mkdir(folder.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  if (symlink(self, path.c_str()) != 0 && errno != EEXIST) return false;
  const pid_t child = fork();
  if (child == 0) {
    char* const none[] = {nullptr};
    execve(path.c_str(), none, none);  // the image runs with argv {""}: main() returns at once
    _exit(127);
  }
  int status = 0;
  return child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int outlive() {
  const pid_t daemon = fork();
  if (daemon == 0) {
    setsid();  // out of the run's process group, which a deadline kills
    close(STDOUT_FILENO);
    close(STDERR_FILENO);
    for (;;) pause();
  }
  std::printf("KTAP version 1\n1..1\n# daemon_started=%d\n# verdict=measured\nok 1 outlive\n", daemon > 0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 0;  // exec_newline_report()'s image
  if (argc == 2 && std::string(argv[1]) == "--list") {
    std::printf("forge CAP_SYS_ADMIN sysrq-trigger\noutlive\n");  // it asks; it is not granted
    return 0;
  }
  if (argc == 3 && std::string(argv[2]) == "outlive") return outlive();
  std::string token = token_in("/proc/cmdline");
  const bool cmdline_token = !token.empty();
  const std::string file_token = token_in("/sigwake/token");
  if (token.empty()) token = file_token;
  // PID 1's memory holds the token: root could read it through /proc/1/mem if PID 1 were dumpable or the
  // reproducer kept CAP_SYS_PTRACE.
  const int init_memory = open("/proc/1/mem", O_RDONLY | O_CLOEXEC);
  const bool stdin_console = is_console(STDIN_FILENO);
  const int console = open("/dev/console", O_WRONLY | O_NOCTTY);
  const int serial = open("/dev/ttyS0", O_WRONLY | O_NOCTTY);
  // A frame with another token, or none known, is still written: it must be rejected, not disrupt.
  const std::string forged = "SIGWAKE " + (token.empty() ? std::string("0000000000000000") : token) +
                             " 999999 00000000 ok 1 forged\n";
  int written = 0;
  for (int fd : {stdin_console ? STDIN_FILENO : -1, console, serial}) {
    if (fd >= 0) written += write(fd, forged.data(), forged.size()) == static_cast<ssize_t>(forged.size());
  }
  const bool kmsg = kmsg_written(), loglevel = loglevel_changed(), redirected = console_redirected();
  const bool machine = machine_written(), admin = has_sys_admin(), segfaulted = report_named_segfault();
  const bool exec_report = exec_newline_report();
  const bool undone = umount2("/dev", MNT_DETACH) == 0;  // last: it would open the way to all above
  // A kernel report's first line in its own output: inside its frame, it must never be read as the kernel's.
  std::printf("KTAP version 1\n1..1\n# [    1.000000] WARNING: CPU: 0 PID: 1 at forged_report+0x1/0x2\n"
              "# cmdline_token=%d\n# token_file_readable=%d\n# init_memory_readable=%d\n"
              "# stdin_is_console=%d\n# console_openable=%d\n# serial_openable=%d\n# forged_frames_written=%d\n"
              "# serial_ports_writable=%d\n# keyboard_status_readable=%d\n# kmsg_written=%d\n# loglevel_changed=%d\n"
              "# console_redirected=%d\n# confinement_undone=%d\n# machine_written=%d\n# cap_sys_admin=%d\n"
              "# report_named_child_segfaulted=%d\n# exec_newline_report=%d\n# verdict=measured\nok 1 forge\n",
              cmdline_token, !file_token.empty(), init_memory >= 0, stdin_console, console >= 0, serial >= 0, written,
              port_open(true, 0x3ff), port_open(false, 0x64),  // the UART's scratch register; i8042 status
              kmsg, loglevel, redirected, undone, machine, admin, segfaulted, exec_report);
  return 0;
}
