// A synchronous perf signal must stay with its own task. A tracepoint can name
// a task other than the one running it: sched_wakeup passes the woken task as
// __perf_task(p), and perf_tp_event() then also delivers it to that task's
// events bound to this CPU (perf_tp_event_target_task(), in the waker's
// context). A SIGTRAP from there would go to the waker, so since 73743c3b0922
// "perf: Ignore sigtrap for tracepoints destined for other tasks" such events
// skip sigtrap events; before, the overflow queued the SIGTRAP on the waker and
// perf_sigtrap() splatted WARN_ON_ONCE(ctx->task != current).
//  - sigtrap_tracepoint_other_task: a child, asleep in a pipe read, has two
//    events on its own sched_wakeup (a filter on the woken pid) bound to CPU 0
//    (where we both run), a count and a sigtrap sampler; our write wakes it. The count proves the tracepoint
//    reached its events; the sigtrap event must count nothing (`wrong-count`
//    otherwise, beside the WARNING a kernel without the fix prints), and no
//    SIGTRAP may reach us or the child.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>

#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

constexpr char kTracefs[] = "/sys/kernel/tracing";
constexpr char kWakeupId[] = "/sys/kernel/tracing/events/sched/sched_wakeup/id";
constexpr int kCpu = 0;

std::optional<std::uint64_t> read_wakeup_id() {
  std::ifstream file(kWakeupId);
  std::uint64_t id = 0;
  if (file >> id) return id;
  return std::nullopt;
}

// The tracepoint's id, its perf config. Where tracefs is not mounted (our guest; a host may have it), root mounts
// it in a mount namespace of its own, which ends with this program; a user cannot: Unsupported.
std::uint64_t wakeup_tracepoint() {
  if (const auto id = read_wakeup_id()) return *id;
  if (unshare(CLONE_NEWNS) == 0 && mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
      mount("tracefs", kTracefs, "tracefs", 0, nullptr) == 0) {
    if (const auto id = read_wakeup_id()) return *id;
  }
  throw Unsupported(std::string("cannot read ") + kWakeupId + " (tracefs: root's, or not in this kernel)");
}

perf_event_attr wakeup_attr(std::uint64_t id, bool sigtrap) {
  perf_event_attr attr = blank_attr(PERF_TYPE_TRACEPOINT, id);
  attr.exclude_hv = 1;
  if (sigtrap) {
    attr.sample_period = 1;
    attr.sigtrap = 1;
    attr.remove_on_exec = 1;
  }
  return attr;
}

// The child's event on its own wakeups. A task's tracepoint event also counts each hit while the task runs,
// whoever the tracepoint names (an interrupt waking another task): the filter keeps the child's wakeups only.
PerfEvent open_wakeups_of(pid_t child, std::uint64_t id, bool sigtrap) {
  PerfEvent event = PerfEvent::open(wakeup_attr(id, sigtrap), child, kCpu);
  const std::string filter = "pid == " + std::to_string(child);
  if (ioctl(event.fd(), PERF_EVENT_IOC_SET_FILTER, filter.c_str()) != 0) {
    throw Unsupported(errno_text("ioctl(PERF_EVENT_IOC_SET_FILTER, \"" + filter + "\")"));
  }
  return event;
}

std::uint64_t count_of(const PerfEvent& event) {
  std::uint64_t count = 0;
  check(read(event.fd(), &count, sizeof count) == sizeof count, "read(the count)");
  return count;
}

// Whether `pid` sleeps (state S in /proc/PID/stat), looked at until `budget` ends.
bool asleep_within(pid_t pid, std::chrono::milliseconds budget) {
  const Deadline deadline(budget);
  do {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    const std::size_t end = line.rfind(')');
    if (end != std::string::npos && line.size() > end + 2 && line[end + 2] == 'S') return true;
    usleep(1000);  // it runs meanwhile: we share one CPU
  } while (!deadline.expired());
  return false;
}

}  // namespace

SIGWAKE_CASE(sigtrap_tracepoint_other_task,
             {.expected = {always(Verdict::kUnsupported,
                                  "tracefs, where a tracepoint's id is read, is root's (mode 0700), and "
                                  "perf_event_paranoid 2 and above refuse a tracepoint event to a user")
                               .in_passes(kUserPasses),
                           fixed_by("73743c3b0922", Verdict::kWrongCount, Verdict::kMeasured,
                                    "73743c3b0922 \"perf: Ignore sigtrap for tracepoints destined for other "
                                    "tasks\" (Debian's changelog of linux 5.15.15-1): perf_tp_event_target_task() in "
                                    "kernel/events/core.c skips an attr.sigtrap event when a tracepoint names "
                                    "another task than the one running it")
                               .backported({"5.15.15"})},
              .defining = {"sigtrap_event_count", "traps_on_waker", "wakee_killed_by"},
              .shown = {"wakeups_counted", "sigtrap_event_count"},
              .kconfig = {"CONFIG_PERF_EVENTS", "CONFIG_TRACEPOINTS"}}) {
  PerfEvent::open(blank_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY), 0, -1);  // a kernel without perf says so first
  const std::uint64_t id = wakeup_tracepoint();  // then tracefs, mounted before we fork
  SignalCapture trap(SIGTRAP);  // a SIGTRAP sent to us, the waker, is counted, not fatal
  pin_to_cpu(kCpu);             // the child too: both events are bound to this CPU
  Pipe wake;
  const pid_t child = fork();
  check(child >= 0, "fork");
  if (child == 0) {
    wake.close_write_end();
    sigset_t trap_only;
    sigemptyset(&trap_only);
    sigaddset(&trap_only, SIGTRAP);
    signal(SIGTRAP, SIG_DFL);  // a SIGTRAP sent here kills the child: its end tells
    sigprocmask(SIG_UNBLOCK, &trap_only, nullptr);
    char byte = 0;
    _exit(read(wake.read_fd(), &byte, 1) == 1 ? 0 : 1);
  }
  wake.close_read_end();
  int status = 0;
  bool reaped = false;
  std::uint64_t wakeups = 0, sigtrap_counted = 0;
  try {
    if (!asleep_within(child, kWakeupBudget)) throw ReproError("the child never slept in its read");
    const PerfEvent counted = open_wakeups_of(child, id, false);
    const PerfEvent sampled = open_wakeups_of(child, id, true);
    {
      const SignalCapture::Unblocked here(trap);
      wake.send_byte();  // sched_wakeup(child) runs here, in our context
      reaped = waitpid(child, &status, 0) == child;
      check(reaped, "waitpid");
    }
    wakeups = count_of(counted);
    sigtrap_counted = count_of(sampled);
  } catch (...) {
    if (!reaped) kill(child, SIGKILL), waitpid(child, nullptr, 0);
    throw;
  }
  report.add("wakeups_counted", static_cast<long long>(wakeups));
  report.add("sigtrap_event_count", static_cast<long long>(sigtrap_counted));
  if (wakeups == 0) throw ReproError("no sched_wakeup reached the child's events: the path never ran");
  trap.accept_pending();
  report.add("traps_on_waker", static_cast<long long>(trap.count()));
  report.add("wakee_killed_by", static_cast<long long>(WIFSIGNALED(status) ? WTERMSIG(status) : 0));
  if (trap.count() > 0 || WIFSIGNALED(status)) {
    return report.decide(Verdict::kMisdelivered, "a SIGTRAP from the child's event reached a task");
  }
  if (sigtrap_counted > 0) {
    return report.decide(Verdict::kWrongCount, "the child's sigtrap event counted wakeups its waker ran");
  }
  report.decide(Verdict::kMeasured, "the wakeup reached the child's count, not its sigtrap event");
}

}  // namespace sigwake
