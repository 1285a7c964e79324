// A synchronous perf signal must stay with its own task. A tracepoint can name
// a task other than the one running it: sched_waking passes the woken task as
// __perf_task(p), and perf_tp_event() then also delivers it to that task's
// events bound to this CPU (perf_tp_event_target_task(), in the waker's
// context). A SIGTRAP from there would go to the waker, so since 73743c3b0922
// "perf: Ignore sigtrap for tracepoints destined for other tasks" such events
// skip sigtrap events.
//  - sigtrap_tracepoint_other_task: a child, asleep in a pipe read, has two
//    events on its own sched_waking (a filter on the woken pid) bound to CPU 0
//    (where we both run), a count and a sigtrap sampler; our write wakes it.
//    The count proves the tracepoint reached its events; the sigtrap event
//    must count nothing (`wrong-count` otherwise). The events of a task that
//    sleeps are inactive, so a kernel without the fix only counts: no overflow,
//    no SIGTRAP (a SIGTRAP to either task would be `misdelivered`).
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

#include "lib/grants.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

constexpr char kTracefs[] = "/sys/kernel/tracing";
constexpr char kWakingId[] = "/sys/kernel/tracing/events/sched/sched_waking/id";
constexpr int kCpu = 0;
constexpr int kChildSetup = 2;  // the child's signal setup or its read failed

std::optional<std::uint64_t> read_waking_id() {
  std::ifstream file(kWakingId);
  std::uint64_t id = 0;
  if (file >> id) return id;
  return std::nullopt;
}

// The tracepoint's id, its perf config. Where tracefs is not mounted (our guest; a host may have it), root mounts
// it in a mount namespace of its own, which ends with this program; a user cannot: Unsupported.
std::uint64_t waking_tracepoint() {
  if (const auto id = read_waking_id()) return *id;
  if (unshare(CLONE_NEWNS) != 0) {
    if (errno == EPERM) throw Unsupported(std::string("cannot read ") + kWakingId + " (tracefs is root's)");
    check(false, "unshare(CLONE_NEWNS)");
  }
  check(mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0, "mount(/, MS_PRIVATE)");
  if (mount("tracefs", kTracefs, "tracefs", 0, nullptr) != 0) {
    if (errno == ENODEV || errno == ENOENT) throw Unsupported(errno_text("mount(tracefs): no tracefs in this kernel"));
    check(false, "mount(tracefs)");
  }
  if (const auto id = read_waking_id()) return *id;
  throw Unsupported(std::string("no ") + kWakingId + " (CONFIG_EVENT_TRACING)");
}

perf_event_attr waking_attr(std::uint64_t id, bool sigtrap) {
  perf_event_attr attr = blank_attr(PERF_TYPE_TRACEPOINT, id);
  attr.exclude_hv = 1;
  if (sigtrap) {
    attr.sample_period = 1;
    attr.sigtrap = 1;
    attr.remove_on_exec = 1;
  }
  return attr;
}

// The child's event on its own wakings. A task's tracepoint event also counts each hit while the task runs,
// whoever the tracepoint names (an interrupt waking another task): the filter keeps the child's own.
PerfEvent open_wakings_of(pid_t child, std::uint64_t id, bool sigtrap) {
  PerfEvent event = PerfEvent::open(waking_attr(id, sigtrap), child, kCpu);
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
                                  "tracefs, where a tracepoint's id is read, is root's (mode 0700); and a "
                                  "tracepoint counts in the kernel, which perf_event_paranoid 2 and above refuse "
                                  "a user")
                               .in_passes(kUserPasses),
                           fixed_by("73743c3b0922", Verdict::kWrongCount, Verdict::kMeasured,
                                    "73743c3b0922 \"perf: Ignore sigtrap for tracepoints destined for other "
                                    "tasks\" (Debian's changelog of linux 5.15.15-1): perf_tp_event_target_task() in "
                                    "kernel/events/core.c skips an attr.sigtrap event when a tracepoint names "
                                    "another task than the one running it")
                               .backported({"5.15.15"})},
              .defining = {"sigtrap_event_count", "traps_on_waker", "wakee_killed_by"},
              .shown = {"wakings_counted", "sigtrap_event_count"},
              .kconfig = {"CONFIG_PERF_EVENTS", "CONFIG_EVENT_TRACING"},
              .grants = {kGrantSysAdmin}}) {  // it mounts tracefs, which our guest does not, to read the id
  PerfEvent::open(blank_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY), 0, -1);  // a kernel without perf says so first
  const std::uint64_t id = waking_tracepoint();  // then tracefs, mounted before we fork
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
    // A SIGTRAP sent here kills the child: its end tells.
    if (signal(SIGTRAP, SIG_DFL) == SIG_ERR || sigprocmask(SIG_UNBLOCK, &trap_only, nullptr) != 0) _exit(kChildSetup);
    char byte = 0;
    _exit(read(wake.read_fd(), &byte, 1) == 1 ? 0 : kChildSetup);
  }
  wake.close_read_end();
  int status = 0;
  bool reaped = false;
  std::uint64_t wakings = 0, sigtrap_counted = 0;
  try {
    if (!asleep_within(child, kWakeupBudget)) throw ReproError("the child never slept in its read");
    const PerfEvent counted = open_wakings_of(child, id, false);
    const PerfEvent sampled = open_wakings_of(child, id, true);
    {
      const SignalCapture::Unblocked here(trap);
      wake.send_byte();  // sched_waking(child) runs here, in our context
      reaped = waitpid(child, &status, 0) == child;
      check(reaped, "waitpid");
    }
    wakings = count_of(counted);
    sigtrap_counted = count_of(sampled);
  } catch (...) {
    if (!reaped) kill_and_reap(child);
    throw;
  }
  report.add("wakings_counted", static_cast<long long>(wakings));
  report.add("sigtrap_event_count", static_cast<long long>(sigtrap_counted));
  if (WIFEXITED(status) && WEXITSTATUS(status) == kChildSetup) throw ReproError("the child's signal setup or read failed");
  if (wakings == 0) throw ReproError("no sched_waking reached the child's events: the path never ran");
  trap.accept_pending();
  report.add("traps_on_waker", static_cast<long long>(trap.count()));
  report.add("wakee_killed_by", static_cast<long long>(WIFSIGNALED(status) ? WTERMSIG(status) : 0));
  if (trap.count() > 0 || WIFSIGNALED(status)) {
    return report.decide(Verdict::kMisdelivered, "a SIGTRAP from the child's event reached a task");
  }
  if (sigtrap_counted > 0) {
    return report.decide(Verdict::kWrongCount, "the child's sigtrap event counted a waking its waker ran");
  }
  report.decide(Verdict::kMeasured, "the waking reached the child's count, not its sigtrap event");
}

}  // namespace sigwake
