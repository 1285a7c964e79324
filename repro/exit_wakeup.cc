// What a reader is told when the monitored task exits with records unread
// (below the watermark: no wakeup has told it of them yet). At exit,
// perf_event_exit_task() -> perf_event_exit_event() in kernel/events/core.c
// wakes the event's waiters (perf_event_wakeup(), and for an inherited copy its
// parent's), and perf_poll() then reports EPOLLHUP alone once is_event_hup():
// the event has exited and no inherited copy lives. The records stay in the
// ring for the reader to drain.
//  - exit_wakeup_poll: an epoll watcher is woken with EPOLLHUP at the exit.
//  - exit_wakeup_sigio: a FASYNC owner, woken (and, since fd20bb51ed39,
//    signalled) once at the watermark, reads what it was woken for; the task
//    then exits with the records written since unread: perf_event_wakeup()
//    signals only a pending_kill, which it cleared at the last signal and no
//    exit sets, so no signal comes (the HUP is for pollers only). The
//    watermark's signal is the case's control: `measured` is the model's
//    count, one at the watermark and none at the exit; with none at the
//    watermark either (the kernels before fd20bb51ed39) the case cannot tell a
//    dropped exit signal from signalling that never works: `not-delivered`.
//  - exit_wakeup_inherit: an inherited event (inherit=1), the monitored task
//    forks, then exits before its child: no HUP while the child's copy lives,
//    and the child's exit wakes the watcher with EPOLLHUP.
// epoll shows whether the exit woke the waiters: the event joins epoll's ready
// list only through the wakeup (ep_poll_callback()), while poll() would find
// EPOLLHUP on asking even when nobody was woken. The watch is edge-triggered
// and looked at before the exit, which must find nothing: a level-triggered
// item left on the ready list by an earlier wakeup would be polled again and
// pass for the exit's.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <functional>
#include <string>

#include "lib/attrs.h"
#include "lib/deadline.h"
#include "lib/evidence.h"
#include "lib/fixture.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

// Half the 1-page ring: exit_wakeup_poll's few SWITCH records stay below it, so nothing wakes the reader before
// the exit; exit_wakeup_sigio's child writes past it once, and the records after that stay below the next one.
constexpr std::uint32_t kHighWatermark = 2048;

class EpollWatch {
 public:
  explicit EpollWatch(int fd) : ep_(epoll_create1(EPOLL_CLOEXEC)) {
    check(ep_ >= 0, "epoll_create1");
    epoll_event want{.events = EPOLLIN | EPOLLET, .data = {.fd = fd}};
    check(epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &want) == 0, "epoll_ctl(ADD)");
  }
  EpollWatch(const EpollWatch&) = delete;
  EpollWatch& operator=(const EpollWatch&) = delete;
  ~EpollWatch() { close(ep_); }

  // The events of a watched fd woken since the last look (0: none), taken off the ready list.
  std::uint32_t look() const {
    epoll_event got{};
    const int n = epoll_wait(ep_, &got, 1, 0);
    check(n >= 0, "epoll_wait");
    return n == 1 ? got.events : 0;
  }

 private:
  int ep_;
};

// The monitored child's body for exit_wakeup_sigio: it switches out and in (each ppoll() sleeps 100 us) until
// told, bounded by kMostNaps: it writes SWITCH records past the watermark while we wait for the wakeup.
class SwitchUntilTold {
 public:
  std::function<void()> body() const {
    return [fd = told_.read_fd()] {
      pollfd told{.fd = fd, .events = POLLIN, .revents = 0};
      const timespec nap{.tv_sec = 0, .tv_nsec = 100'000};
      for (int i = 0; i < kMostNaps && ppoll(&told, 1, &nap, nullptr) == 0; ++i) {
      }
    };
  }
  void tell() const { told_.send_byte(); }

 private:
  static constexpr int kMostNaps = 20000;  // 2 s of naps at least, far more records than the watermark needs
  Pipe told_;
};

// Polls for the wakeup the child's records owe us at kHighWatermark, for as long as the child writes them (a
// loaded TCG host can take seconds for 2 KiB of SWITCH records), then a budget more once they crossed it. A
// child that ended its naps short of the watermark ends the wait; one still napping after kWritingBudget means
// the host, not the kernel, is too slow to judge. Leaves `head` at data_head when it stopped: whether the
// records crossed.
short wait_for_watermark(SwitchFixture& f, std::uint64_t& head) {
  constexpr auto kWritingBudget = 30s;
  const Deadline writing(kWritingBudget);
  for (;;) {
    const short revents = wait_readable(f.event.fd(), kWakeupBudget);
    head = f.ring.head();
    if (revents != 0) return revents;
    if (head >= kHighWatermark) return wait_readable(f.event.fd(), kWakeupBudget);
    if (f.child.ran(0ms)) return 0;
    if (writing.expired()) throw ReproError("the child was still writing SWITCH records after 30 s, " +
                                            std::to_string(head) + " bytes of them: too slow a host to judge");
  }
}

perf_event_attr inherited(perf_event_attr attr) {
  attr.inherit = 1;
  return attr;
}

// The monitored task's child outlives it: we adopt it (a subreaper) to decide when the last monitored
// task exits and to wait for that exit; it never outlives the case.
struct Orphans {
  Orphans() { check(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0, "prctl(PR_SET_CHILD_SUBREAPER)"); }
  Orphans(const Orphans&) = delete;
  Orphans& operator=(const Orphans&) = delete;
  ~Orphans() {
    if (last > 0) kill_and_reap(last);
    prctl(PR_SET_CHILD_SUBREAPER, 0);
  }
  // SIGKILL to the last monitored task, and its exit waited for.
  void end_last() {
    check(kill(last, SIGKILL) == 0, "kill(the last monitored task)");
    check(waitpid(last, nullptr, 0) == last, "waitpid(the last monitored task)");
    last = 0;
  }
  pid_t last = 0;
};

void add_epoll_evidence(Report& report, const std::string& key, std::uint32_t events) {
  report.add(key + "_hup", (events & EPOLLHUP) != 0);
  report.add(key + "_in", (events & EPOLLIN) != 0);
}

// Once the exit woke the watcher: delivered with EPOLLHUP, and the records written before it still readable;
// `before` is what the look before the (last) exit found, which must be nothing.
void decide_exit_wakeup(Report& report, std::uint32_t before, std::uint32_t woken, int records) {
  if (records == 0) return report.decide(Verdict::kNoRecord, "the child ran, the kernel wrote no SWITCH record");
  if (before != 0) {
    return report.decide(Verdict::kMisdelivered, "the watcher was woken before the exit, with the records below the "
                                                 "watermark");
  }
  if (woken == 0) return report.decide(Verdict::kNoWakeup, "the last monitored task exited, no waiter was woken");
  if (!(woken & EPOLLHUP)) return report.decide(Verdict::kMisdelivered, "woken at the exit without EPOLLHUP");
  report.decide(Verdict::kDelivered, "woken at the exit with EPOLLHUP, the records still in the ring");
}

const Words kExitDefining = {"woken_hup", "woken_in", "signals_at_exit", "hup_before_last_exit",
                             "signals_before_exit"};

Facts exit_facts(Verdict verdict, const char* what) {
  return {.expected = {always(verdict, std::string("perf_event_exit_event() in kernel/events/core.c (read alike in "
                                                   "Debian's linux-source-6.1 and -6.12): ") + what)},
          .defining = kExitDefining,
          .shown = {"records", "woken_hup", "woken_in", "signals_at_exit"},
          .kconfig = kPerfConfig};
}

}  // namespace

SIGWAKE_CASE(exit_wakeup_poll, {exit_facts(Verdict::kDelivered,
                                           "perf_event_wakeup() wakes the exited event's waiters and perf_poll() "
                                           "reports EPOLLHUP alone once is_event_hup()")}) {
  SwitchFixture f(switch_watermark_attr(kHighWatermark));
  f.trigger(0ms);
  const EpollWatch watch(f.event.fd());
  const std::uint32_t before = watch.look();
  add_epoll_evidence(report, "before_exit", before);
  f.child.end();
  const std::uint32_t woken = watch.look();
  add_epoll_evidence(report, "woken", woken);
  add_poll_evidence(report, wait_readable(f.event.fd(), 0ms));
  const int records = add_record_evidence(report, f.ring.consume());
  decide_exit_wakeup(report, before, woken, records);
}

SIGWAKE_CASE(exit_wakeup_sigio,
             {.expected = {changed_at("6.10", "fd20bb51ed39", Verdict::kNotDelivered, Verdict::kMeasured,
                                      "fd20bb51ed39 \"perf/ring_buffer: Trigger IO signals for watermark_wakeup\" "
                                      "(v6.10) signals the owner at the watermark; perf_event_wakeup() in "
                                      "kernel/events/core.c calls kill_fasync() only for a pending_kill, which it "
                                      "clears once signalled and an exit does not set: one signal, none at the exit "
                                      "(before fd20bb51ed39 none at all)")},
              .defining = kExitDefining,
              .shown = {"records", "signals_before_exit", "signals_at_exit"},
              .kconfig = kPerfConfig}) {
  SignalCapture sigio(SIGIO);  // first in, last out: outlives the event
  const SwitchUntilTold switching;
  SwitchFixture f(switch_watermark_attr(kHighWatermark), SwitchFixture::Scope::kChild, switching.body());
  f.event.request_signals(getpid(), SIGIO);
  short revents = 0;
  std::uint64_t head = 0;
  f.trigger(0ms, [&] {
    revents = wait_for_watermark(f, head);
    switching.tell();
  });
  sigio.collect(kSignalGrace, kSettle);
  const int before_exit = sigio.count();
  report.add("signals_before_exit", static_cast<long long>(before_exit));
  report.add("data_head_at_watermark", static_cast<long long>(head));
  if (!(revents & POLLIN) && head < kHighWatermark) {
    return report.decide(Verdict::kNoRecord, "the child switched to the end of its naps, its records stopped short "
                                             "of the watermark");
  }
  if (head < kHighWatermark) {
    return report.decide(Verdict::kMisdelivered, "the reader was woken with " + std::to_string(head) +
                                                     " bytes written, below the watermark");
  }
  if (!(revents & POLLIN)) {
    return report.decide(Verdict::kNoWakeup, "the child's records crossed the watermark, the reader was not woken");
  }
  report.add("records_read_before_exit", static_cast<long long>(f.ring.consume().records.size()));
  f.child.end();
  sigio.collect(kSignalGrace, kSettle);
  report.add("data_head_at_exit", static_cast<long long>(f.ring.head()));
  report.add("signals_at_exit", static_cast<long long>(sigio.count() - before_exit));
  add_signal_evidence(report, sigio);
  const int records = add_record_evidence(report, f.ring.consume());
  if (records == 0) return report.decide(Verdict::kNoRecord, "the child's exit left no SWITCH record unread");
  if (sigio.count() > before_exit) return report.decide(Verdict::kDelivered, "the exit signalled the FASYNC owner");
  if (before_exit == 0) {
    return report.decide(Verdict::kNotDelivered, "no signal at the watermark, none at the exit with records unread");
  }
  report.decide(Verdict::kMeasured, "signalled at the watermark, not at the exit with records unread");
}

SIGWAKE_CASE(exit_wakeup_inherit, {exit_facts(Verdict::kDelivered,
                                              "an inherited copy's exit wakes its parent event "
                                              "(perf_event_wakeup(parent_event)), and is_event_hup() holds back "
                                              "EPOLLHUP while the parent's child_list has a copy")}) {
  Orphans orphans;
  int fds[2];
  check(pipe2(fds, O_CLOEXEC) == 0, "pipe2");
  SwitchFixture f(inherited(switch_watermark_attr(kHighWatermark)), SwitchFixture::Scope::kChildOnCpu0, [&] {
    const pid_t grandchild = fork_stopped({}, true);  // a group of its own: ending our child spares it
    (void)!write(fds[1], &grandchild, sizeof grandchild);
    _exit(0);
  });
  close(fds[1]);
  const EpollWatch watch(f.event.fd());
  f.event.enable();
  f.child.resume();
  const bool told = wait_readable(fds[0], kWakeupBudget) & POLLIN;
  check(told && read(fds[0], &orphans.last, sizeof orphans.last) == sizeof orphans.last,
        "read(the monitored task's child)");
  close(fds[0]);
  f.child.end();  // reaps the monitored task, which has exited
  const std::uint32_t before = watch.look();
  add_epoll_evidence(report, "before_last_exit", before);
  const bool early_hup = (before | static_cast<std::uint32_t>(wait_readable(f.event.fd(), 0ms))) & EPOLLHUP;
  report.add("hup_before_last_exit", early_hup);
  orphans.end_last();
  const std::uint32_t woken = watch.look();
  add_epoll_evidence(report, "woken", woken);
  const int records = add_record_evidence(report, f.ring.consume());
  if (early_hup) {
    return report.decide(Verdict::kMisdelivered, "EPOLLHUP while an inherited copy of the event still lived");
  }
  decide_exit_wakeup(report, before, woken, records);
}

}  // namespace sigwake
