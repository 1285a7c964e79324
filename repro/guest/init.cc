// PID 1 of the sigwake initramfs: mount the pseudo filesystems, run every
// reproducer in /repro under a deadline, print KTAP framed by the boot token on
// the console, power off. The token comes in /sigwake/token (mode 0400, in an
// archive the harness appends per boot), which init reads and unlinks before
// any reproducer runs: not on the command line, which every process (and
// dmesg) can read. Kernel command line:
//   sigwake.timeout_ms=N     per-reproducer deadline (default 10000)
//   sigwake.repeat=N         runs of each reproducer per pass (default 5)
//   sigwake.passes=P,...     privilege passes, in order (default: all of them):
//                            root, or user-paranoidN: uid 65534 with
//                            /proc/sys/kernel/perf_event_paranoid set to N
//   sigwake.mode=poweroff    report the uptime at /init and power off (bench)
#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../lib/kernel_path.h"
#include "frame.h"
#include "runner.h"

namespace {

constexpr const char* kReproDir = "/repro";
constexpr const char* kTokenFile = "/sigwake/token";
constexpr const char* kParanoid = "/proc/sys/kernel/perf_event_paranoid";
constexpr int kNobody = 65534;

std::string read_file(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string cmdline_value(const std::string& cmdline, const std::string& key, const std::string& fallback) {
  std::istringstream words(cmdline);
  std::string word;
  while (words >> word) {
    if (word.rfind(key + "=", 0) == 0) return word.substr(key.size() + 1);
  }
  return fallback;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, separator);) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

long long number_or(const std::string& text, long long fallback) {
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  return end != text.c_str() && *end == '\0' && value > 0 ? value : fallback;
}

// A privilege pass: "root", or "user-paranoidN" (uid 65534 under paranoid N).
struct Pass {
  std::string name;
  int uid = -1;
  std::string paranoid;  // empty: leave the kernel's setting
};

bool parse_pass(const std::string& name, Pass* pass) {
  const std::string prefix = "user-paranoid";
  if (name == "root") {
    *pass = Pass{name, -1, ""};
    return true;
  }
  if (name.rfind(prefix, 0) == 0 && name.size() > prefix.size()) {
    *pass = Pass{name, kNobody, name.substr(prefix.size())};
    return true;
  }
  return false;
}

// A reproducer program and its cases; no cases: it could not list them, so it runs whole.
struct Program {
  std::string name;
  std::vector<std::string> cases;
};

Program list_cases(const std::string& name, std::chrono::milliseconds budget) {
  const sigwake::RunOutcome listing = sigwake::run_with_deadline({std::string(kReproDir) + "/" + name, "--list"}, budget);
  Program program{name, {}};
  if (listing.exited && listing.exit_code == 0) program.cases = split(listing.output, '\n');
  return program;
}

std::vector<std::string> reproducers() {
  std::vector<std::string> names;
  if (DIR* dir = opendir(kReproDir)) {
    while (dirent* entry = readdir(dir)) {
      if (entry->d_name[0] != '.') names.emplace_back(entry->d_name);
    }
    closedir(dir);
  }
  std::sort(names.begin(), names.end());
  return names;
}

class Console {
 public:
  Console(int fd, std::string token) : fd_(fd), framer_(std::move(token)) {}
  void line(const std::string& payload) {
    const std::string framed = framer_.frame(payload);
    // One write per line keeps a line whole against other console writers.
    (void)!write(fd_, framed.data(), framed.size());
  }

 private:
  int fd_;
  sigwake::Framer framer_;
};

std::string result_line(std::size_t number, const std::string& name, const sigwake::RunOutcome& run) {
  const std::string id = std::to_string(number) + " " + name;
  if (run.timed_out) return "not ok " + id + " # TIMEOUT killed at the deadline";
  if (!run.exited) return "not ok " + id + " # ERROR killed by signal " + std::to_string(run.term_signal);
  if (run.exit_code == 0) return "ok " + id;
  if (run.exit_code == 4) return "ok " + id + " # SKIP";
  return "not ok " + id;
}

void power_off() {
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
  mkdir("/dev", 0755);
  mkdir("/proc", 0555);
  mkdir("/sys", 0555);
  mount("devtmpfs", "/dev", "devtmpfs", 0, nullptr);  // EBUSY where the kernel mounted it already
  mount("proc", "/proc", "proc", 0, nullptr);
  mount("sysfs", "/sys", "sysfs", 0, nullptr);

  const int console_fd = open("/dev/console", O_WRONLY | O_NOCTTY | O_CLOEXEC);
  const std::string cmdline = read_file("/proc/cmdline");
  std::string token = read_file(kTokenFile);
  token.erase(token.find_last_not_of("\n") + 1);
  unlink(kTokenFile);
  Console console(console_fd >= 0 ? console_fd : STDOUT_FILENO, token.empty() ? "unset" : token);

  const double uptime_s = std::atof(read_file("/proc/uptime").c_str());
  utsname uts{};
  uname(&uts);

  console.line("KTAP version 1");
  console.line("# sigwake.release=" + std::string(uts.release));
  console.line("# sigwake.init_uptime_ms=" + std::to_string(static_cast<long long>(uptime_s * 1000)));
  if (cmdline_value(cmdline, "sigwake.mode", "run") == "poweroff") {
    console.line("1..0 # SKIP poweroff mode");
    console.line("# sigwake.done=0");
    power_off();
    return 1;
  }

  const std::chrono::milliseconds budget(number_or(cmdline_value(cmdline, "sigwake.timeout_ms", ""), 10000));
  const long long repeat = number_or(cmdline_value(cmdline, "sigwake.repeat", ""), 5);
  const std::vector<std::string> pass_names =
      split(cmdline_value(cmdline, "sigwake.passes", "root,user-paranoid1,user-paranoid2,user-paranoid3"), ',');
  std::vector<Pass> passes;
  for (const std::string& name : pass_names) {
    Pass pass;
    if (parse_pass(name, &pass)) passes.push_back(pass);
    else console.line("# sigwake.warning=unknown pass " + name);
  }
  std::vector<Program> programs;
  std::size_t runs_per_pass = 0;
  for (const std::string& name : reproducers()) {
    programs.push_back(list_cases(name, budget));
    runs_per_pass += std::max<std::size_t>(programs.back().cases.size(), 1) * repeat;
  }
  console.line("1.." + std::to_string(passes.size() * runs_per_pass));

  sigwake::KernelPathTracer tracer;  // root's, so it follows every pass
  std::size_t number = 0;
  for (const Pass& pass : passes) {
    console.line("# sigwake.pass=" + pass.name);
    if (!pass.paranoid.empty()) {
      std::ofstream(kParanoid) << pass.paranoid << "\n";
    }
    std::string paranoid = read_file(kParanoid);
    paranoid.erase(paranoid.find_last_not_of("\n") + 1);
    console.line("# sigwake.paranoid=" + paranoid);
    for (const Program& program : programs) {
      // Each case in its own process: its own deadline, and nothing left over from another case.
      std::vector<std::vector<std::string>> invocations;
      const std::string path = std::string(kReproDir) + "/" + program.name;
      for (const std::string& c : program.cases) invocations.push_back({path, "--case", c});
      if (invocations.empty()) invocations.push_back({path});
      for (const auto& argv : invocations) {
        for (long long run = 0; run < repeat; ++run) {
          console.line("# sigwake.start=" + program.name);
          if (argv.size() == 3) console.line("# sigwake.case=" + argv[2]);
          const sigwake::RunOutcome outcome =
              sigwake::run_with_deadline(argv, budget, pass.uid, [&tracer](pid_t pid) { tracer.follow(pid); });
          std::istringstream lines(outcome.output);
          for (std::string line; std::getline(lines, line);) console.line("    " + line);  // a KTAP subtest
          console.line("# sigwake.duration_us=" + std::to_string(outcome.duration_us));
          if (outcome.exited) console.line("# sigwake.exit=" + std::to_string(outcome.exit_code));
          for (const auto& [function, value] : tracer.counts()) {
            console.line("# sigwake.kernel_path." + function + "=" + value);
          }
          console.line(result_line(++number, program.name, outcome));
        }
      }
    }
  }
  console.line("# sigwake.done=" + std::to_string(number));  // all reported
  power_off();
  return 1;
}
