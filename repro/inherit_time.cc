// An inherited event's enabled time at a child's exit: as an inherited copy's
// task exits, its times are added to its parent's (sync_child_event() in
// kernel/events/core.c, from perf_event_exit_event()), and the
// parent's read() with PERF_FORMAT_TOTAL_TIME_ENABLED includes them. A copy
// bound to a CPU its task does not run on is enabled but INACTIVE there, and
// its times are brought up to date only when its state changes.
//  - inherit_time_other_cpu: an event on us bound to our CPU, where we stay;
//    a child moves to another CPU, runs a known stretch of CPU time there and
//    exits. Our enabled time, less our own (a plain event's beside it), must
//    grow by at least that stretch. Until a3c3c66670ce
//    (and again since c418d8b4d7a4) the exit added an INACTIVE copy's times to
//    the parent before bringing them up to date, so the child's time on CPU 1
//    since its times were last updated was never counted.
// The plain event in our context, not inherited, also keeps a child's context
// from being a clone (perf_event_init_context()), so perf never swaps ours into
// the child and the child exits with its own copy.
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <exception>
#include <string>
#include <vector>

#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

constexpr std::int64_t kChildRunNs = 30'000'000;  // the stretch the child runs on CPU 1
constexpr auto kChildBudget = 10s;                // wall time it may take under TCG

struct Times {
  std::uint64_t count, enabled, running;
};

Times read_times(const PerfEvent& event) {
  Times times{};
  check(read(event.fd(), &times, sizeof times) == sizeof times, "read(the event)");
  return times;
}

std::int64_t thread_cpu_ns() {
  timespec ts{};
  check(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// The CPUs this task may run on, in order.
std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  check(sched_getaffinity(0, sizeof set, &set) == 0, "sched_getaffinity");
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

// The forked child: killed and reaped if the case throws before it reaps it.
struct ChildGuard {
  explicit ChildGuard(pid_t forked) : pid(forked) {}
  ChildGuard(const ChildGuard&) = delete;
  ChildGuard& operator=(const ChildGuard&) = delete;
  ~ChildGuard() {
    if (pid > 0) kill_and_reap(pid);
  }
  void reap() {
    int status = 0;
    check(waitpid(pid, &status, 0) == pid, "waitpid");
    pid = -1;
    how = WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                            : "killed by signal " + std::to_string(WTERMSIG(status));
  }
  pid_t pid;
  std::string how;
};

std::string ms(std::int64_t ns) { return std::to_string(ns / 1'000'000) + "." + std::to_string(ns / 100'000 % 10); }

}  // namespace

SIGWAKE_CASE(inherit_time_other_cpu,
             {.expected = {changed_at("6.15", "a3c3c66670ce", Verdict::kWrongCount, Verdict::kMeasured,
                                      "a3c3c66670ce \"perf/core: Fix child_total_time_enabled accounting bug at "
                                      "task exit\" (v6.15; stable 6.12.23 and 6.1.185, as Debian's changelogs place "
                                      "it): __perf_remove_from_context() in kernel/events/core.c brings an exiting "
                                      "copy's times up to date before perf_child_detach() adds them to the parent. "
                                      "c418d8b4d7a4 \"perf/core: Fix missing read event generation on task exit\" "
                                      "(v6.19; stable 6.18.2 and 6.17.13) moved sync_child_event() ahead of "
                                      "perf_remove_from_context() in perf_event_exit_event(), so an INACTIVE "
                                      "copy's times are added stale again: seen on Debian's 7.2.13 and this "
                                      "machine's 6.18.44, not on 6.1.192, 6.12.95 or 6.12.118")
                               .backported({"6.1.185", "6.12.23"})},
              .defining = {"enabled_covers_child"},
              .shown = {"child_ran_ms", "enabled_gain_ms", "own_gain_ms"},
              .kconfig = kPerfConfig,
              .cpus = 2}) {
  const std::vector<int> cpus = allowed_cpus();
  report.add("cpus", static_cast<long long>(cpus.size()));
  if (cpus.size() < 2) {
    throw Unsupported("one CPU we may run on: a copy is INACTIVE only in a child on another CPU than its event's "
                      "(boot an SMP kernel with --cpus 2)");
  }
  const int ours = cpus[0], childs = cpus[1];
  pin_to_cpu(ours);
  perf_event_attr attr = blank_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
  attr.inherit = 1;
  attr.exclude_kernel = 1;  // allowed at perf_event_paranoid 2
  attr.exclude_hv = 1;
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  const PerfEvent event = PerfEvent::open(attr, 0, ours);
  perf_event_attr plain = attr;
  plain.inherit = 0;
  const PerfEvent own = PerfEvent::open(plain, 0, ours);  // our own time alone; and no clone of our context

  Pipe told;
  const Times before = read_times(event), own_before = read_times(own);
  ChildGuard child(fork());
  check(child.pid >= 0, "fork");
  if (child.pid == 0) {
    try {
      told.close_read_end();
      pin_to_cpu(childs);
      const std::int64_t start = thread_cpu_ns();
      const Deadline deadline(kChildBudget);
      while (thread_cpu_ns() - start < kChildRunNs && !deadline.expired()) burn_cpu(1ms);
      told.send("ran " + std::to_string(thread_cpu_ns() - start));
      _exit(0);
    } catch (const std::exception& e) {
      told.send(std::string("error ") + e.what());
      _exit(1);
    }
  }
  told.close_write_end();
  const std::string words = told.read_to_end();
  child.reap();
  if (words.starts_with("error ")) throw ReproError("the child: " + words.substr(6));
  if (!words.starts_with("ran ")) throw ReproError("the child ended without a word (" + child.how + ")");
  const std::int64_t child_ran = std::stoll(words.substr(4));
  if (child_ran < kChildRunNs) {
    throw ReproError("the child ran " + ms(child_ran) + " ms of CPU in " +
                     std::to_string(std::chrono::duration_cast<std::chrono::seconds>(kChildBudget).count()) +
                     " s of wall time");
  }
  const Times after = read_times(event), own_after = read_times(own);

  // The inherited event's enabled time less our own (the plain event's): the copy's, which a kernel that adds
  // it stale still counts up to the child's move (its copy was ACTIVE on our CPU until then), not after.
  const auto own_gain = static_cast<std::int64_t>(own_after.enabled - own_before.enabled);
  const auto gain = static_cast<std::int64_t>(after.enabled - before.enabled) - own_gain;
  // Context time runs from the child's switch in to its switch out, its CPU time within that: a correct
  // kernel's copy covers it all, give or take the two clocks' microseconds.
  const bool covers = gain * 10 >= child_ran * 9;
  report.add("child_ran_ms", ms(child_ran));
  report.add("enabled_gain_ms", ms(gain));
  report.add("own_gain_ms", ms(own_gain));
  report.add("enabled_covers_child", static_cast<long long>(covers));
  const std::string where = " on CPU " + std::to_string(childs) + " (ours: " + std::to_string(ours) + ")";
  if (!covers) {
    return report.decide(Verdict::kWrongCount, "the child's copy added " + ms(gain) + " ms of enabled time to ours "
                                               "for " + ms(child_ran) + " ms of CPU" + where);
  }
  report.decide(Verdict::kMeasured, "the child's copy added " + ms(gain) + " ms of enabled time to ours, covering "
                                    "its " + ms(child_ran) + " ms of CPU" + where);
}

}  // namespace sigwake
