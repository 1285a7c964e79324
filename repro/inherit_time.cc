// An inherited event's enabled time at a child's exit: as an inherited copy's
// task exits, its times are added to its parent's (perf_event_exit_event() ->
// perf_child_detach() -> sync_child_event() in kernel/events/core.c), and the
// parent's read() with PERF_FORMAT_TOTAL_TIME_ENABLED includes them. A copy
// bound to a CPU its task does not run on is enabled but INACTIVE there, and
// its times are brought up to date only when its state changes.
//  - inherit_time_other_cpu: an event on us bound to CPU 0, where we stay; a
//    child moves to CPU 1, runs a known stretch of CPU time there and exits.
//    Our enabled time must grow by at least that stretch. Until a3c3c66670ce
//    (and again since c418d8b4d7a4) the exit added an INACTIVE copy's times to
//    the parent before bringing them up to date, so the child's time on CPU 1
//    since its times were last updated was never counted.
// A second event in our context that is not inherited keeps a child's context
// from being a clone (perf_event_init_context()), so perf never swaps ours into
// the child and the child exits with its own copy.
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <string>

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
                                      "perf_remove_from_context() in perf_event_exit_event(), so an INACTIVE copy's "
                                      "are added stale again: seen on Debian's 7.2.13 and this machine's 6.18.44, "
                                      "not on 6.1.192, 6.12.95 or 6.12.118")
                               .backported({"6.1.185", "6.12.23"})},
              .defining = {"enabled_covers_child"},
              .shown = {"child_ran_ms", "enabled_gain_ms"},
              .kconfig = kPerfConfig,
              .cpus = 2}) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
    throw Unsupported("one CPU online: a copy is INACTIVE only in a child on another CPU than its event's (boot "
                      "an SMP kernel with --cpus 2)");
  }
  pin_to_cpu(0);
  perf_event_attr attr = blank_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
  attr.inherit = 1;
  attr.exclude_kernel = 1;  // allowed at perf_event_paranoid 2
  attr.exclude_hv = 1;
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  const PerfEvent event = PerfEvent::open(attr, 0, 0);
  perf_event_attr plain = attr;
  plain.inherit = 0;
  const PerfEvent no_clone = PerfEvent::open(plain, 0, 0);

  Pipe ran;
  const Times before = read_times(event);
  const pid_t child = fork();
  check(child >= 0, "fork");
  if (child == 0) {
    try {
      ran.close_read_end();
      pin_to_cpu(1);
      const std::int64_t start = thread_cpu_ns();
      const Deadline deadline(kChildBudget);
      while (thread_cpu_ns() - start < kChildRunNs && !deadline.expired()) burn_cpu(1ms);
      ran.send(std::to_string(thread_cpu_ns() - start));
      _exit(0);
    } catch (...) {
      _exit(1);
    }
  }
  ran.close_write_end();
  const std::string told = ran.read_to_end();
  int status = 0;
  check(waitpid(child, &status, 0) == child, "waitpid");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || told.empty()) throw ReproError("the child did not run to its exit");
  const std::int64_t child_ran = std::stoll(told);
  if (child_ran < kChildRunNs) throw ReproError("the child ran " + ms(child_ran) + " ms of CPU in 10 s of wall time");
  const Times after = read_times(event);

  const auto gain = static_cast<std::int64_t>(after.enabled - before.enabled);
  const bool covers = gain * 10 >= child_ran * 9;  // clocks of the scheduler and of perf, not one clock
  report.add("child_ran_ms", ms(child_ran));
  report.add("enabled_gain_ms", ms(gain));
  report.add("enabled_covers_child", static_cast<long long>(covers));
  if (!covers) {
    return report.decide(Verdict::kWrongCount, "our enabled time grew " + ms(gain) + " ms across a child that ran " +
                                                   ms(child_ran) + " ms on CPU 1 with the event enabled");
  }
  report.decide(Verdict::kMeasured, "our enabled time grew " + ms(gain) + " ms, covering the child's " +
                                        ms(child_ran) + " ms on CPU 1");
}

}  // namespace sigwake
