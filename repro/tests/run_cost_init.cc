// The init of a guest that measures what every run of the case loop costs before a case does anything, for
// bench/run_cost.py: the runner's own process (fork, exec of a static program that exits at once, the reap and
// the sweep), its confinement, a reproducer's start (--list) as root and as the user passes' uid, the console's
// cost per framed byte, the printk mark said as each run starts and ends, and the kernel-path tracer's load.
// Each figure is the median of its samples, taken in turns so that a host's load falls on all alike, printed as
// "sigwake-run-cost: <name>=<microseconds>"; then it powers off. Run as `/init --exit` it exits at once: the
// program whose runs are timed.
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "../guest/case_loop.h"
#include "../guest/frame.h"
#include "../guest/printk_clock.h"
#include "../guest/runner.h"
#include "../lib/kernel_path.h"

namespace {

constexpr int kSamples = 25;
constexpr const char* kReproducer = "/repro/watermark_sigio";  // any reproducer: its --list
constexpr std::size_t kConsoleBytes = 16 * 1024;

long long now_us() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1'000'000LL + t.tv_nsec / 1000;
}

long long microseconds(const std::function<void()>& what) {
  const long long start = now_us();
  what();
  return now_us() - start;
}

long long median(std::vector<long long> samples) {
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

void say(const std::string& name, long long value) {
  std::printf("sigwake-run-cost: %s=%lld\n", name.c_str(), value);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--exit") == 0) return 0;
  if (getpid() != 1) {
    std::fputs("sigwake-run-cost-init: runs only as PID 1 of a guest (or with --exit)\n", stderr);
    return 2;
  }
  mkdir("/dev", 0755);
  mkdir("/proc", 0555);
  mkdir("/sys", 0555);
  mkdir("/tmp", 01777);
  mount("devtmpfs", "/dev", "devtmpfs", 0, nullptr);
  mount("proc", "/proc", "proc", 0, nullptr);
  mount("sysfs", "/sys", "sysfs", 0, nullptr);

  using sigwake::RunLimits;
  const std::chrono::seconds budget(30);
  const auto run = [&](std::vector<std::string> argv, RunLimits limits) {
    return [argv, limits, budget] { sigwake::run_with_deadline(argv, budget, limits); };
  };
  // In turns: a load on the host slows every kind's samples alike.
  const std::vector<std::pair<std::string, std::function<void()>>> kinds = {
      {"process_us", run({"/init", "--exit"}, RunLimits{})},
      {"confined_process_us", run({"/init", "--exit"}, RunLimits{.confined = true})},
      {"confined_reproducer_list_us", run({kReproducer, "--list"}, RunLimits{.confined = true})},
      {"confined_nobody_reproducer_list_us",
       run({kReproducer, "--list"}, RunLimits{.uid = sigwake::kNobody, .confined = true})},
  };
  std::map<std::string, std::vector<long long>> samples;
  for (int i = 0; i < kSamples; ++i) {
    for (const auto& [name, what] : kinds) samples[name].push_back(microseconds(what));
  }
  for (const auto& [name, what] : kinds) say(name, median(samples[name]));

  // The console: a run's lines as init frames them (a 16-hex-digit token), written one line a write, then
  // drained, so the figure is what the port took to carry them.
  sigwake::FramedWriter line(STDOUT_FILENO, "0123456789abcdef");
  const std::string payload = "    # record_types=SWITCH,SWITCH,SWITCH,SWITCH";  // a typical line's length
  const std::size_t framed = sigwake::Framer("0123456789abcdef").frame(payload).size();
  std::vector<long long> console;
  for (int i = 0; i < 5; ++i) {
    console.push_back(microseconds([&] {
      for (std::size_t sent = 0; sent < kConsoleBytes; sent += framed) line(payload);
      tcdrain(STDOUT_FILENO);
    }));
  }
  say("console_us_per_kib", median(console) * 1024 / static_cast<long long>(kConsoleBytes));

  sigwake::PrintkClock clock;
  std::vector<long long> marks;
  for (int i = 0; i < kSamples; ++i) marks.push_back(microseconds([&] { clock.mark(); }));
  say("printk_mark_us", median(marks));
  say("tracer_load_us", microseconds([] { sigwake::KernelPathTracer tracer; }));
  say("done", 1);
  sync();
  reboot(RB_POWER_OFF);
  return 1;
}
