// Synchronous perf signals: perf_event_attr.sigtrap (97ba62b27867 "perf: Add
// support for SIGTRAP on perf events", v5.13; remove_on_exec required with it).
// At an overflow __perf_event_overflow() queues task_work on the overflowing
// task (pending_task), and on its way back to user space perf_pending_task() ->
// perf_sigtrap() -> send_sig_perf() sends SIGTRAP with si_code TRAP_PERF, the
// event's sig_data in si_perf_data and its type in si_perf_type; taken while
// unblocked it is synchronous (si_perf_flags 0).
//  - sigtrap_thread: this thread's page faults; the signal must run on this
//    thread, and the first one name the address whose fault raised it (si_addr:
//    the sample's addr, which __perf_event_overflow() keeps in pending_addr).
//    Checked here, where the address is certain: the faults are this thread's
//    own, run straight after enabling, with the code and stack they need in.
//  - sigtrap_two_periods: one fault that is two overflows at one instruction
//    (repro/lib/two_periods.h): one SIGTRAP naming it, and no warning.
//  - sigtrap_inherit_thread: inherit + inherit_thread, the page faults of a
//    thread created after the open (its event is inherited at clone with
//    CLONE_THREAD): the signal must run on that thread, not on its creator.
//  - sigtrap_switch_without_address: a trap at each context switch, a sample
//    with no address: its SIGTRAP names none (si_addr 0), where a kernel that
//    kept pending_addr from a sample_flags-less addr sent stack garbage.
//  - sigtrap_inherit_thread_fork: inherit + inherit_thread, and a child made by
//    fork(), not as a thread: it must not inherit the event, so its faults
//    raise no SIGTRAP (`not-delivered` is right).
//  - sigtrap_remove_on_exec: inherit, into a forked child that traps, then
//    execs with the event enabled and SIGTRAP unblocked into an image of this
//    program that waits for our cue; once it runs we enable our event (which
//    reaches every copy still on its child_list) and cue it to fault:
//    remove_on_exec (2e498d0a74e5, v5.13) removes the copy at the exec, so the
//    new image, whose SIGTRAP is the default again, is not killed, neither by
//    a copy kept enabled nor by one the exec only disabled.
//  - sigtrap_exec_fault: the event, opened by the child itself with kernel-mode
//    faults counted, is enabled just before execve(), whose own copy of the path
//    faults on a page nothing touched. That overflow queues the SIGTRAP's task
//    work, exec removes the event and resets SIGTRAP to its default, and the
//    work then ran on the way back to user space and killed the new image, until
//    perf_sigtrap() learnt to skip an event already removed ("perf/core: Don't
//    send SIGTRAP after exec removed the event", in 6.12.118). A second event
//    counts the child's kernel-mode faults, also removed at the exec, and the
//    new image (kept_fd_counted) reads it: a new image that ran proves a fault
//    counted inside execve() too, or the case never reached its path (`error`).
//  - sigtrap_exec_fault_fd_kept: the same with the event's fd kept across the
//    exec, so the work finds the removed event PERF_EVENT_STATE_EXIT where the
//    close-on-exec had released it (DEAD): the fix's check covers both.
// The event counts page faults, not CPU time: its type stays PERF_TYPE_SOFTWARE
// in an inherited copy (a task-clock event's is rewritten to the task_clock
// PMU's own type by perf_swevent_init(), and inherit_event() copies that).
// The first SIGTRAP comes while SIGTRAP is unblocked and must say so; later
// ones may come while the handler runs (SIGTRAP blocked) and are then rightly
// flagged TRAP_PERF_FLAG_ASYNC.
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "lib/budgets.h"
#include "lib/exec_child.h"
#include "lib/process.h"
#include "lib/repro.h"
#include "lib/two_periods.h"

namespace sigwake {
namespace {

constexpr std::uint64_t kMarker = 0x5167ea4e;  // sig_data: told back in si_perf_data
constexpr int kTrapPerf = 6;                   // TRAP_PERF, include/uapi/asm-generic/siginfo.h
constexpr std::size_t kPages = 16;

enum class Inherit { kNone, kThreads, kChildren };

perf_event_attr sigtrap_attr(Inherit inherit) {
  perf_event_attr attr = blank_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
  attr.sample_period = 1;
  attr.exclude_kernel = 1;  // a user page fault still counts; allowed at perf_event_paranoid 2
  attr.exclude_hv = 1;
  attr.disabled = 1;
  attr.sigtrap = 1;
  attr.remove_on_exec = 1;
  attr.sig_data = kMarker;
  attr.inherit = inherit != Inherit::kNone;
  attr.inherit_thread = inherit == Inherit::kThreads;
  return attr;
}

// Faults kPages fresh pages in (a tinyconfig kernel has no madvise() to drop them: each round maps anew),
// stopping once `traps` SIGTRAPs ran (every page, without `trap`). Returns the address of the first page.
std::uintptr_t fault_fresh_pages(const SignalCapture* trap, int traps = 1) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* area = mmap(nullptr, kPages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  check(area != MAP_FAILED, "mmap");
  auto* pages = static_cast<volatile char*>(area);
  for (std::size_t at = 0; at < kPages * page && (trap == nullptr || trap->count() < traps); at += page) pages[at] = 1;
  munmap(area, kPages * page);
  return reinterpret_cast<std::uintptr_t>(area);
}

// With SIGTRAP unblocked here: enables the event (and its inherited children), faults until `traps`
// SIGTRAPs ran (or the budget is spent), and disables it again before blocking SIGTRAP. Returns the address
// of the first page it faulted.
std::uintptr_t fault_until_trapped(const SignalCapture& trap, const PerfEvent& event, int traps = 1) {
  const SignalCapture::Unblocked here(trap);
  event.enable();
  const Deadline deadline(kWakeupBudget);
  std::optional<std::uintptr_t> first;
  while (trap.count() < traps && !deadline.expired()) {
    const std::uintptr_t area = fault_fresh_pages(&trap, traps);
    first = first.value_or(area);
  }
  event.disable();
  return first.value_or(0);
}

// A task traps again at its next fault once its handler returned: the task work that sent the first one
// leaves the task counting (perf_pending_task() puts back the recursion context it took).
constexpr int kTwoTraps = 2;

// Delivered when each SIGTRAP says TRAP_PERF with our sig_data and type on `faulter`, the first synchronously
// (and, given the address its sample had, naming that address in si_addr: the fault's, or 0 for a sample with
// none; `address_key` says which), and there were `traps` of them (or more, unless `exactly`).
void decide_sigtrap(Report& report, const SignalCapture& trap, pid_t faulter,
                    std::optional<std::uintptr_t> address = std::nullopt,
                    const char* address_key = "first_trap_at_fault", int traps = kTwoTraps, bool exactly = false) {
  report.add("signals", static_cast<long long>(trap.count()));
  report.add("faulter_tid", static_cast<long long>(faulter));
  int wrong = 0, elsewhere = 0;
  std::string each;  // code/data/type/flags@tid of every delivery kept
  for (const Delivery& d : trap.deliveries()) {
    each += (each.empty() ? "" : ",") + std::to_string(d.code) + "/" + std::to_string(d.perf_data) + "/" +
            std::to_string(d.perf_type) + "/" + std::to_string(d.perf_flags) + "@" + std::to_string(d.tid);
    wrong += d.code != kTrapPerf || d.perf_data != kMarker || d.perf_type != PERF_TYPE_SOFTWARE || d.error != 0;
    elsewhere += d.tid != faulter;
  }
  report.add("traps", each.empty() ? "none" : each);
  report.add("traps_with_wrong_siginfo", static_cast<long long>(wrong));
  report.add("traps_on_other_threads", static_cast<long long>(elsewhere));
  if (trap.count() == 0) return report.decide(Verdict::kNotDelivered, "the event overflowed, no SIGTRAP came");
  if (trap.count() < traps) {
    return report.decide(Verdict::kWrongCount, "one SIGTRAP, then the same task's next overflows raised none");
  }
  if (exactly && trap.count() > traps) {
    return report.decide(Verdict::kWrongCount, std::to_string(trap.count()) + " SIGTRAPs where " +
                                                   std::to_string(traps) + " were due");
  }
  const Delivery first = trap.deliveries().front();
  report.add("si_signo", static_cast<long long>(first.signo));
  report.add("si_code", static_cast<long long>(first.code));
  report.add("signal_tid", static_cast<long long>(first.tid));
  report.add("si_perf_data", static_cast<long long>(first.perf_data));
  report.add("si_perf_type", static_cast<long long>(first.perf_type));
  report.add("si_perf_flags", static_cast<long long>(first.perf_flags));
  const auto trapped_at = static_cast<std::uintptr_t>(first.band);  // a SIGTRAP's si_addr sits where si_band does
  if (address) report.add(address_key, trapped_at == *address);
  if (wrong > 0) {
    return report.decide(Verdict::kMisdelivered,
                         "a SIGTRAP without TRAP_PERF, our sig_data, the event's type or si_errno 0");
  }
  if (elsewhere > 0) return report.decide(Verdict::kMisdelivered, "a SIGTRAP ran on a thread that did not fault");
  if (first.perf_flags != 0) {
    return report.decide(Verdict::kMisdelivered, "the first SIGTRAP, taken unblocked, says it came asynchronously");
  }
  if (address && trapped_at != *address) {
    return report.decide(Verdict::kMisdelivered, std::string("the first SIGTRAP's si_addr is not its sample's address (") +
                                                     address_key + ")");
  }
  report.decide(Verdict::kDelivered);
}

// `text` where it sits in our own program's file, on a private mapping of that file that nothing has read:
// the first read of it, by execve(), faults. Found with read(), which leaves the mapping untouched; no memfd
// (tinyconfig kernels have none) and no file written (the guest has no writable file system).
const char* untouched_copy(const char* text) {
  const int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  check(fd >= 0, "open(/proc/self/exe)");
  std::string file;
  char chunk[1 << 16];
  for (ssize_t n; (n = read(fd, chunk, sizeof chunk)) > 0;) file.append(chunk, static_cast<std::size_t>(n));
  const std::size_t at = file.find(std::string(text) + '\0');
  if (at == std::string::npos) throw ReproError(std::string("no \"") + text + "\" in our own program's file");
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t start = at / page * page;
  void* mapped = mmap(nullptr, at - start + std::strlen(text) + 1, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(start));
  check(mapped != MAP_FAILED, "mmap(/proc/self/exe)");
  close(fd);
  return static_cast<const char*>(mapped) + (at - start);
}

// SIGTRAP at each of this task's context switches; they are counted from the scheduler's kernel registers, so
// exclude_kernel is 0.
perf_event_attr switch_trap_attr() {
  perf_event_attr attr = sigtrap_attr(Inherit::kNone);
  attr.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
  attr.exclude_kernel = 0;
  return attr;
}

// perf_event_paranoid 2 and above refuse an unprivileged event that counts in the kernel.
Expectation switches_need_paranoid_below_2() {
  return always(Verdict::kUnsupported,
                "perf_event_paranoid 2 and above refuse an unprivileged event that counts in the kernel "
                "(perf_allow_kernel() in kernel/events/core.c), and context switches are counted only there")
      .in_passes({"user-paranoid2", "user-paranoid3"});
}

// A child whose event never trapped before its exec ends with this.
constexpr int kNeverTrapped = 3;
// A new image that found no kernel-mode fault counted after its parent image's last look ends with this.
constexpr int kNoFaultInExec = 6;

// A disabled count of this task's kernel-mode page faults until an exec removes it.
perf_event_attr kernel_faults_attr() {
  perf_event_attr attr = blank_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
  attr.exclude_user = 1;
  attr.exclude_hv = 1;
  attr.remove_on_exec = 1;
  attr.disabled = 1;
  return attr;
}

std::uint64_t read_count(int fd) {
  std::uint64_t count = 0;
  check(read(fd, &count, sizeof count) == sizeof count, "read(the kernel-fault count)");
  return count;
}

// Delivered when the child trapped before its exec and the new image ran to its end; `killed` says what a
// SIGTRAP that killed the new image means.
void decide_after_exec(Report& report, const ExecChild& end, const char* killed) {
  const int status = end.status;
  const bool exited = WIFEXITED(status);
  const bool trapped = !(exited && WEXITSTATUS(status) == kNeverTrapped);
  report.add("child_trapped_before_exec", trapped);
  report.add("child_killed_by", static_cast<long long>(WIFSIGNALED(status) ? WTERMSIG(status) : 0));
  report.add("child_exit", static_cast<long long>(exited ? WEXITSTATUS(status) : -1));
  end.raise_setup_failure();
  if (!trapped) return report.decide(Verdict::kNotDelivered, "the child's event never trapped");
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGTRAP) return report.decide(Verdict::kMisdelivered, killed);
  if (!exited || WEXITSTATUS(status) != 0) {
    return report.decide(Verdict::kMisdelivered, "the exec'd image did not end cleanly");
  }
  report.decide(Verdict::kDelivered, "trapped before the exec; the new image ran to its end");
}

Facts sigtrap_facts(Words peers = {}) {
  return {.expected = {changed_at("5.13", "97ba62b27867", Verdict::kUnsupported, Verdict::kDelivered,
                                  "97ba62b27867 \"perf: Add support for SIGTRAP on perf events\" (v5.13): an overflow of an "
                                  "attr.sigtrap event in __perf_event_overflow() (kernel/events/core.c) makes "
                                  "perf_sigtrap() send SIGTRAP with TRAP_PERF to the task that overflowed, its "
                                  "si_addr the sample's address; 0683b53197b5 \"signal: Deliver all of the siginfo "
                                  "perf data in _perf\" gives sig_data and the event's type in si_perf_data and "
                                  "si_perf_type; 78ed93d72ded \"signal: Deliver SIGTRAP on perf event asynchronously "
                                  "if blocked\" (v5.18, send_sig_perf() in kernel/signal.c) adds si_perf_flags, "
                                  "TRAP_PERF_FLAG_ASYNC only when SIGTRAP is blocked; c5d93d23a260 \"perf: Enqueue "
                                  "SIGTRAP always via task_work\" (v6.10) sends it from task work on the way back to "
                                  "user space, where it had come from irq_work; inherit_thread (2b26f0aa0049, v5.13) "
                                  "inherits the event into threads cloned with CLONE_THREAD")},
          .defining = {"si_code", "si_perf_data", "si_perf_type", "si_perf_flags", "traps_on_other_threads",
                       "first_trap_at_fault"},
          .shown = {"signals", "si_code", "si_perf_flags"},
          .kconfig = kPerfConfig,
          .peers = std::move(peers)};
}

}  // namespace

SIGWAKE_CASE(sigtrap_thread, {sigtrap_facts()}) {
  SignalCapture trap(SIGTRAP);
  PerfEvent event = PerfEvent::open(sigtrap_attr(Inherit::kNone), 0, -1);
  {
    const Deadline warm(kWakeupBudget);  // the event still off: what runs between enabling and the first write
    fault_fresh_pages(&trap);            // faults in here, so the first fault it counts is that write
    event.disable();
  }
  const std::uintptr_t fault = fault_until_trapped(trap, event, kTwoTraps);
  trap.collect(kSignalGrace, kSettle);
  decide_sigtrap(report, trap, gettid(), fault);
}

// One fault spanning two periods (fault_spanning_two_periods()): two overflows at one instruction before the
// first SIGTRAP's task work runs. The second must find that work queued and queue none (one SIGTRAP, naming
// the fault), and must not warn: WARN_ON_ONCE(event->pending_work != pending_id) in __perf_event_overflow()
// takes an overflow at the same instruction for the same trap (since ca6c21327c6a "perf: Fix missing
// SIGTRAPs", v6.1).
Facts two_periods_facts() {
  Facts facts = sigtrap_facts();
  facts.expected = {changed_at("5.13", "97ba62b27867", Verdict::kUnsupported, Verdict::kDelivered,
                               "97ba62b27867 \"perf: Add support for SIGTRAP on perf events\" (v5.13): the first of "
                               "two overflows at one instruction queues the SIGTRAP and __perf_event_overflow() in "
                               "kernel/events/core.c queues no second one while it is pending, so one SIGTRAP names "
                               "the fault; since ca6c21327c6a \"perf: Fix missing SIGTRAPs\" (v6.1) the second "
                               "checks only that it is at the same instruction (WARN_ON_ONCE(event->pending_work != "
                               "pending_id)), where before it warned at any overflow of an exclude_kernel event "
                               "while a SIGTRAP was pending")};
  return facts;
}

SIGWAKE_CASE(sigtrap_two_periods, {two_periods_facts()}) {
  attempt_two_periods([&report](int attempt) {
    SignalCapture trap(SIGTRAP);
    const PerfEvent event = PerfEvent::open(sigtrap_attr(Inherit::kNone), 0, -1);
    const AnonymousPage page;
    bool spanned = false;
    {
      const SignalCapture::Unblocked here(trap);
      spanned = fault_spanning_two_periods(event, page);
    }
    if (!spanned) return false;
    trap.collect(kSignalGrace, kSettle);
    report.add("attempts", static_cast<long long>(attempt));
    decide_sigtrap(report, trap, gettid(), page.address(), "first_trap_at_fault", 1, true);
    return true;
  });
}

// The upstream sigtrap_threads opens the same event (inherit, inherit_thread, sigtrap) on a hardware breakpoint.
SIGWAKE_CASE(sigtrap_inherit_thread, {sigtrap_facts({"sigtrap_threads"})}) {
  SignalCapture trap(SIGTRAP);  // blocked here, and so in the thread: it unblocks while it faults
  PerfEvent event = PerfEvent::open(sigtrap_attr(Inherit::kThreads), 0, -1);  // disabled: our own faults do not count
  pid_t faulter = 0;
  std::exception_ptr failed;
  std::thread thread([&] {
    faulter = gettid();
    try {
      fault_until_trapped(trap, event, kTwoTraps);  // enabling the parent enables the copy this thread inherited
    } catch (...) {
      failed = std::current_exception();  // the case's, thrown again here
    }
  });
  thread.join();
  if (failed) std::rethrow_exception(failed);
  trap.collect(kSignalGrace, kSettle);
  decide_sigtrap(report, trap, faulter);
}

// A context switch's sample has no address, so its SIGTRAP names none: si_addr 0. Since 7b0846301531 "perf: Use
// sample_flags for addr" (v6.1) perf_sample_data_init() leaves such a sample's addr unset, and only
// af169b7759a9 "perf: Fixup SIGTRAP and sample_flags interaction" (v6.1) keeps pending_addr 0 unless
// PERF_SAMPLE_ADDR is among its flags: without it si_addr is whatever the overflow's stack held.
SIGWAKE_CASE(sigtrap_switch_without_address,
             {.expected = {switches_need_paranoid_below_2(),
                           changed_at("5.13", "97ba62b27867", Verdict::kUnsupported, Verdict::kDelivered,
                                      "97ba62b27867 \"perf: Add support for SIGTRAP on perf events\" (v5.13) sends "
                                      "SIGTRAP at each overflow, here each context switch, with si_addr the sample's "
                                      "address: 0 for a switch (perf_sw_event_sched() passes none); af169b7759a9 "
                                      "\"perf: Fixup SIGTRAP and sample_flags interaction\" (v6.1) keeps it 0 once "
                                      "7b0846301531 \"perf: Use sample_flags for addr\" left such a sample's addr "
                                      "unset")},
              .defining = {"si_code", "si_perf_data", "si_perf_type", "si_perf_flags", "traps_on_other_threads",
                           "first_trap_without_address"},
              .shown = {"signals", "first_trap_without_address"},
              .kconfig = kPerfConfig}) {
  SignalCapture trap(SIGTRAP);
  PerfEvent event = PerfEvent::open(switch_trap_attr(), 0, -1);
  {
    const SignalCapture::Unblocked here(trap);
    event.enable();
    const Deadline deadline(kWakeupBudget);
    while (trap.count() < kTwoTraps && !deadline.expired()) usleep(1000);  // each sleep switches out: an overflow
    event.disable();
  }
  trap.collect(kSignalGrace, kSettle);
  decide_sigtrap(report, trap, gettid(), 0, "first_trap_without_address");
}

SIGWAKE_CASE(sigtrap_remove_on_exec,
             {.expected = {changed_at("5.13", "2e498d0a74e5", Verdict::kUnsupported, Verdict::kDelivered,
                                      "2e498d0a74e5 \"perf: Add support for event removal on exec\" (v5.13): "
                                      "perf_event_exec() -> perf_event_remove_on_exec() in kernel/events/core.c "
                                      "removes every event with attr.remove_on_exec from the task that execs, and "
                                      "with it the copy from its parent's child_list (perf_child_detach()), so "
                                      "enabling the parent no longer reaches the new image")},
              .defining = {"child_trapped_before_exec", "child_killed_by", "image_ran"},
              .shown = {"child_trapped_before_exec", "child_killed_by"},
              .kconfig = kPerfConfig}) {
  SignalCapture trap(SIGTRAP);  // its handler is the child's until the exec; ours takes our own faults' traps
  PerfEvent event = PerfEvent::open(sigtrap_attr(Inherit::kChildren), 0, -1);  // disabled: our faults do not count
  Pipe ready, cue;  // the new image's "I run" and our "fault now"
  bool image_ran = false;
  const ExecChild end = run_exec_child(
      [&] {
        fault_until_trapped(trap, event);  // enabling our parent's event enables the copy we inherited
        if (trap.count() == 0) _exit(kNeverTrapped);
        event.enable();  // enabled at the exec: a copy the exec kept would trap the new image's first fault
        const std::string ready_fd = std::to_string(ready.keep_write_end_across_exec());
        const std::string cue_fd = std::to_string(cue.keep_read_end_across_exec());
        const SignalCapture::Unblocked here(trap);
        exec_image("fault_on_cue", {ready_fd, cue_fd});
      },
      [&](pid_t child) {
        image_ran = ready.wait_byte(2 * kWakeupBudget);  // the child's own trap budget, then its exec
        if (!image_ran) {
          kill(child, SIGKILL);  // it never said it ran: no cue will come, and it must not wait for one
          return;
        }
        event.enable();  // our event and every copy still on its child_list: a copy the exec kept traps now
        cue.send_byte();
      });
  event.disable();
  trap.accept_pending();  // a fault of ours while the event was on: its SIGTRAP runs here
  report.add("image_ran", image_ran);
  if (!image_ran && !(WIFSIGNALED(end.status) && WTERMSIG(end.status) == SIGTRAP)) {
    throw ReproError("the new image never said it ran");
  }
  decide_after_exec(report, end,
                    "the new image was killed by SIGTRAP once we enabled our event: the exec kept the copy "
                    "(disabled, not removed)");
}

// The image sigtrap_remove_on_exec execs into: it says it runs (a byte on the fd in argv[0]), waits for the
// cue (a byte on the fd in argv[1]), then faults fresh pages. SIGTRAP's action is the default again here: a
// trap kills it.
// The new image of sigtrap_exec_fault: exits 0 when the kept counter (argv[0], removed by the exec) counted a
// kernel-mode fault after the value its parent image read last (argv[1]), i.e. inside execve().
SIGWAKE_IMAGE(kept_fd_counted) {
  std::uint64_t count = 0;
  if (argc != 2 || read(std::atoi(argv[0]), &count, sizeof count) != sizeof count) return kExecSetupFailed;
  return count > std::strtoull(argv[1], nullptr, 10) ? 0 : kNoFaultInExec;
}

SIGWAKE_IMAGE(fault_on_cue) {
  if (argc != 2) return kExecSetupFailed;
  const int ready = std::atoi(argv[0]), cue = std::atoi(argv[1]);
  char byte = 0;
  if (write(ready, &byte, 1) != 1 || !(wait_readable(cue, kWakeupBudget) & POLLIN) || read(cue, &byte, 1) != 1) {
    return kExecSetupFailed;
  }
  for (int round = 0; round < 4; ++round) fault_fresh_pages(nullptr);
  return 0;
}

SIGWAKE_CASE(sigtrap_inherit_thread_fork,
             {.expected = {changed_at("5.13", "2b26f0aa0049", Verdict::kUnsupported, Verdict::kNotDelivered,
                                      "2b26f0aa0049 \"perf: Support only inheriting events if cloned with "
                                      "CLONE_THREAD\" (v5.13): inherit_task_group() in kernel/events/core.c "
                                      "skips an inherit_thread event for a clone without CLONE_THREAD")},
              .defining = {"child_traps"},
              .shown = {"child_traps"},
              .kconfig = kPerfConfig}) {
  SignalCapture trap(SIGTRAP);  // the child's handler too: it counts in the child's copy
  PerfEvent event = PerfEvent::open(sigtrap_attr(Inherit::kThreads), 0, -1);  // disabled
  const pid_t child = fork();
  check(child >= 0, "fork");
  if (child == 0) {
    {
      const SignalCapture::Unblocked here(trap);
      event.enable();  // ours (the parent's, asleep in waitpid) and any copy the child inherited
      fault_fresh_pages(&trap);  // one fault would trap, had the child inherited the event
      event.disable();
    }
    _exit(trap.count() > 0 ? 1 : 0);
  }
  int status = 0;
  check(waitpid(child, &status, 0) == child, "waitpid");
  trap.accept_pending();  // a fault of ours while the event was on: its SIGTRAP runs here, not at exit
  if (!WIFEXITED(status)) throw ReproError("the forked child did not exit");
  report.add("child_traps", static_cast<long long>(WEXITSTATUS(status)));
  if (WEXITSTATUS(status) != 0) {
    return report.decide(Verdict::kMisdelivered, "a child made by fork() took SIGTRAP from an inherit_thread event");
  }
  report.decide(Verdict::kNotDelivered, "the forked child faulted, no SIGTRAP: the event stayed with the threads");
}

}  // namespace sigwake

namespace sigwake {

namespace {

// The exec cases' child. The exec removes the event (PERF_EVENT_STATE_EXIT). When its fd is close-on-exec,
// as every event here is opened, the exec's close queues its release as task work too, after the SIGTRAP's,
// and task work runs newest first: perf_release() marks it PERF_EVENT_STATE_DEAD before the SIGTRAP's work
// runs (the overflow's reference keeps it allocated). Kept across the exec, it stays EXIT.
ExecChild fault_inside_exec(bool keep_event_fd) {
  return run_exec_child([keep_event_fd] {
    SignalCapture trap(SIGTRAP);
    const char* path = untouched_copy("/proc/self/exe");
    perf_event_attr attr = sigtrap_attr(Inherit::kNone);
    attr.exclude_kernel = 0;  // execve()'s faults on our pages are taken in the kernel
    PerfEvent event = PerfEvent::open(attr, 0, -1);
    if (keep_event_fd) check(fcntl(event.fd(), F_SETFD, 0) == 0, "fcntl(F_SETFD): the event kept across the exec");
    fault_until_trapped(trap, event);
    if (trap.count() == 0) _exit(kNeverTrapped);
    const PerfEvent counter = PerfEvent::open(kernel_faults_attr(), 0, -1);
    check(fcntl(counter.fd(), F_SETFD, 0) == 0, "fcntl(F_SETFD): the counter kept across the exec");
    char fd_text[16], before_text[24];
    std::snprintf(fd_text, sizeof fd_text, "%d", counter.fd());
    // The code run between the last look and execve() faulted in now: a user-mode fault there would raise a
    // SIGTRAP whose signal frame could fault in the kernel, a kernel fault outside execve().
    std::snprintf(before_text, sizeof before_text, "%llu", static_cast<unsigned long long>(read_count(counter.fd())));
    for (const void* code : {reinterpret_cast<const void*>(&execv), reinterpret_cast<const void*>(&execve)}) {
      (void)*static_cast<const volatile char*>(code);
    }
    close(STDOUT_FILENO);  // the new image is no case: no KTAP of ours
    const SignalCapture::Unblocked here(trap);
    counter.enable();
    event.enable();  // its SIGTRAPs until the exec are ours to take
    const std::uint64_t before = read_count(counter.fd());  // nothing but execve() takes a kernel fault after this
    std::snprintf(before_text, sizeof before_text, "%llu", static_cast<unsigned long long>(before));
    char* const argv[] = {const_cast<char*>("sigtrap_perf"), const_cast<char*>("--image"),
                          const_cast<char*>("kept_fd_counted"), fd_text, before_text, nullptr};
    execv(path, argv);
  });
}

void decide_exec_fault(Report& report, const ExecChild& end) {
  const bool image_said = WIFEXITED(end.status) && WEXITSTATUS(end.status) == kNoFaultInExec;
  if (image_said) throw ReproError("the new image ran, but no kernel-mode fault was counted inside execve(): the "
                                   "case never reached its path");
  decide_after_exec(report, end,
                    "the new image was killed by SIGTRAP: the overflow inside execve() signalled after the exec "
                    "removed the event");
}

Facts exec_fault_facts() {
  return {.expected = {always(Verdict::kUnsupported,
                              "perf_event_paranoid 2 and above refuse an unprivileged event that counts in the "
                              "kernel (perf_allow_kernel() in kernel/events/core.c), and only kernel-mode faults "
                              "raise this case's SIGTRAP inside execve()")
                           .in_passes({"user-paranoid2", "user-paranoid3"}),
                       fixed_by("", Verdict::kMisdelivered, Verdict::kDelivered,
                                "a bug from 2e498d0a74e5 \"perf: Add support for event removal on exec\" (v5.13), "
                                "fixed by \"perf/core: Don't send SIGTRAP after exec removed the event\" (stable "
                                "6.12.118, Debian's changelog of linux 6.12.118-1; its upstream commit is not "
                                "confirmed here): perf_sigtrap() in kernel/events/core.c returns for an event "
                                "whose state is PERF_EVENT_STATE_EXIT or below, so the task work an overflow "
                                "inside execve() queued no longer kills the new image")
                           .backported({"6.12.118"})},
          .defining = {"child_trapped_before_exec", "child_killed_by"},
          .shown = {"child_trapped_before_exec", "child_killed_by"},
          .kconfig = kPerfConfig};
}

}  // namespace

SIGWAKE_CASE(sigtrap_exec_fault, {exec_fault_facts()}) {
  decide_exec_fault(report, fault_inside_exec(false));
}

// The same with the event's fd kept open across the exec: the work finds the event EXIT, not DEAD, so a
// perf_sigtrap() that skipped only a released event would still kill the new image.
SIGWAKE_CASE(sigtrap_exec_fault_fd_kept, {exec_fault_facts()}) {
  decide_exec_fault(report, fault_inside_exec(true));
}

}  // namespace sigwake

namespace sigwake {
namespace {

// How the child of sigtrap_exit_stop ends when it cannot go on (kNeverTrapped and kNoFaultInExec are the exec
// cases', whose words differ).
constexpr int kNoSwitchTrap = 7;  // it never trapped at a context switch
constexpr int kNoCue = 8;         // its tracer never cued it to exit

// In the child: traps at a switch, then blocks SIGTRAP (a traced task would stop for every SIGTRAP, and each
// stop is a switch that queues the next), says so and waits for the tracer's cue before it exits. The tracer
// cues at once; the long wait only keeps the cue's write from meeting a child gone.
[[noreturn]] void trap_then_exit(Pipe& trapped, Pipe& cue) {
  trapped.close_read_end();
  cue.close_write_end();
  SignalCapture trap(SIGTRAP);
  PerfEvent event = PerfEvent::open(switch_trap_attr(), 0, -1);
  {
    const SignalCapture::Unblocked here(trap);
    event.enable();
    const Deadline deadline(kWakeupBudget);
    while (trap.count() == 0 && !deadline.expired()) usleep(1000);  // each sleep switches out: an overflow
  }
  if (trap.count() == 0) _exit(kNoSwitchTrap);
  trapped.send_byte();
  if (!cue.wait_byte(10 * kWakeupBudget)) _exit(kNoCue);
  _exit(0);  // the event still on: the exit stop switches out with it
}

// In the tracer: the first stop after seizing must be the exit stop (SIGTRAP is blocked in the child); it is
// let go on. Whether it came; a child that ended first is left for run_exec_child() to reap.
bool let_exit_stop_go(pid_t child, Pipe& trapped, Pipe& cue) {
  trapped.close_write_end();  // a child that ends early is seen at once
  cue.close_read_end();
  if (!trapped.wait_byte(2 * kWakeupBudget)) return false;  // it never trapped, or was refused: it says why
  if (ptrace(PTRACE_SEIZE, child, nullptr, PTRACE_O_TRACEEXIT) != 0) {
    if (errno == EPERM) throw Unsupported(errno_text("ptrace(PTRACE_SEIZE) of our own child (Yama's ptrace_scope?)"));
    check(false, "ptrace(PTRACE_SEIZE)");
  }
  cue.send_byte();
  siginfo_t first{};  // looked at, not reaped: an end is run_exec_child()'s to reap
  check(waitid(P_PID, static_cast<id_t>(child), &first, WEXITED | WSTOPPED | WNOWAIT) == 0, "waitid");
  if (first.si_code != CLD_TRAPPED) throw ReproError("the traced child ended without its exit stop");
  int status = 0;
  check(waitpid(child, &status, 0) == child, "waitpid(the child's first stop)");
  const bool exit_stop = status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8));
  // Any other stop is a signal the child had blocked (a kernel forcing SIGTRAP through the block, as before
  // 78ed93d72ded, v5.18): not this case's path.
  check(ptrace(PTRACE_CONT, child, nullptr, exit_stop ? 0 : WSTOPSIG(status)) == 0, "ptrace(PTRACE_CONT)");
  if (!exit_stop) throw ReproError("the traced child stopped before its exit (status " + std::to_string(status) + ")");
  return true;
}

}  // namespace

// The stop puts the task to sleep inside do_exit() before perf_event_exit_task(): that switch overflows the
// event and queues its SIGTRAP task work, which only exit_task_work() runs. Since 4f6fc7821283 "perf: Fix
// sample vs do_exit()" (Debian 6.1.147-1, 6.12.35-1) moved perf_event_exit_task() ahead of it, the work finds
// the context's task TASK_TOMBSTONE; perf_sigtrap() must return there quietly, and splatted "WARNING in
// perf_sigtrap" (WARN_ON_ONCE(ctx->task != current): once a boot) until 3da6bb419750 checked the exit first.
// The verdict holds the setup (a trap at a switch, the exit stop, a clean end); the WARNING is a kernel
// report, the finding a kernel with the first fix and without the second gives.
SIGWAKE_CASE(sigtrap_exit_stop,
             {.expected = {switches_need_paranoid_below_2(),
                           always(Verdict::kMeasured,
                                  "97ba62b27867 \"perf: Add support for SIGTRAP on perf events\" (v5.13) sends "
                                  "SIGTRAP at each overflow, here each context switch; a ptrace exit stop "
                                  "(PTRACE_O_TRACEEXIT, ptrace_event() early in do_exit() in kernel/exit.c) is one "
                                  "more, whose task work runs in exit_task_work(), after perf_event_exit_task() since "
                                  "4f6fc7821283 \"perf: Fix sample vs do_exit()\" (Debian 6.1.147-1, 6.12.35-1); "
                                  "3da6bb419750 \"perf/core: Fix WARN in perf_sigtrap()\" (Debian 6.1.192-1, "
                                  "6.12.113-1) makes perf_sigtrap() return for an exited event before its "
                                  "WARN_ON_ONCE(ctx->task != current)")},
              .defining = {"trapped_before_exit", "exit_stop", "child_exit"},
              .shown = {"exit_stop", "child_exit"},
              .kconfig = kPerfConfig}) {
  Pipe trapped, cue;
  bool exit_stop = false;
  const ExecChild end = run_exec_child([&] { trap_then_exit(trapped, cue); },
                                       [&](pid_t child) { exit_stop = let_exit_stop_go(child, trapped, cue); });
  end.raise_setup_failure();
  const bool exited = WIFEXITED(end.status);
  report.add("trapped_before_exit", !(exited && WEXITSTATUS(end.status) == kNoSwitchTrap));
  report.add("exit_stop", exit_stop);
  report.add("child_exit", static_cast<long long>(exited ? WEXITSTATUS(end.status) : -1));
  report.add("child_killed_by", static_cast<long long>(WIFSIGNALED(end.status) ? WTERMSIG(end.status) : 0));
  if (exited && WEXITSTATUS(end.status) == kNoSwitchTrap) {
    return report.decide(Verdict::kNotDelivered, "the child slept again and again with the event on, no SIGTRAP came");
  }
  if (exited && WEXITSTATUS(end.status) == kNoCue) throw ReproError("the child never got its tracer's cue");
  if (!exit_stop) throw ReproError("the child ended before it said it trapped, and no exit stop was seen");
  if (!exited || WEXITSTATUS(end.status) != 0) {
    return report.decide(Verdict::kMisdelivered, "the child did not end cleanly after its exit stop");
  }
  report.decide(Verdict::kMeasured, "trapped at a switch, stopped at its exit with the event on, ended cleanly");
}

}  // namespace sigwake
