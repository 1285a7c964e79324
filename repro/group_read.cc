// Reads of a whole group (PERF_FORMAT_GROUP), and what the kernel refuses for them.
//  - group_read_size_limit: a group's read() must fit 16 KiB: perf_event_validate_size() in
// kernel/events/core.c refuses (E2BIG) a sibling that would grow the read size
// of the new event, of the leader or of any sibling past it. Here the leader
// reads the group (PERF_FORMAT_GROUP | ID | LOST: a count, then value, id and
// lost for each event: 8 + 24 x events bytes) and the siblings read only
// themselves, so the leader's size is the limit: siblings join until it is met,
// and the next is refused. Until 382c27f4ed28 (v6.7) only the new sibling's own
// read size was checked, and siblings without PERF_FORMAT_GROUP joined without end.
//  - group_read_inherited_regrouped: an inherited group gains a sibling after a
//    child inherited it, so the child's copy has one sibling fewer: read() of the
//    parent's leader, which sums its children's copies slot by slot, must fail
//    with ECHILD (perf_read_group() -> __perf_read_group_add() compares each
//    child group with its parent's), not sum mismatched groups.
#include <sys/resource.h>

#include <cerrno>
#include <unistd.h>

#include <cstring>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

constexpr int kReadLimit = 16 * 1024;
constexpr int kMostSiblings = 800;  // past the prediction: where a kernel that never refuses stops being asked
constexpr std::uint64_t kLeaderFormat = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST;

int leader_read_size(int events) { return 8 + 24 * events; }

// Closes the events from many threads at once. Debian's PREEMPT_RT kernels before 7.x wait about 12 ms in
// each perf event's release (measured under TCG on 6.12.95-rt: 200 closes 2.6 s from one thread, 0.3 s
// from ten; 7.2-rt does not wait), so one thread closing the siblings took the case past its deadline there.
// The waits overlap; what is measured was reported before. A thread that cannot start leaves its share to
// `events`' destructor, after the started ones are joined (jthread).
void release_together(std::vector<PerfEvent> events) {
  constexpr std::size_t kThreads = 32;
  std::vector<std::jthread> closers;
  try {
    for (std::size_t t = 0; t < kThreads && t < events.size(); ++t) {
      closers.emplace_back([&events, t] {
        for (std::size_t i = t; i < events.size(); i += kThreads) PerfEvent dropped = std::move(events[i]);
      });
    }
  } catch (const std::system_error&) {
    // fewer closers: slower, still right
  }
}

perf_event_attr counter(std::uint64_t read_format) {
  perf_event_attr attr = blank_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.read_format = read_format;
  return attr;
}

}  // namespace

SIGWAKE_CASE(group_read_size_limit,
             {.expected = {changed_at("6.7", "382c27f4ed28", Verdict::kWrongCount, Verdict::kMeasured,
                                      "382c27f4ed28 \"perf: Fix perf_event_validate_size()\" (v6.7, CVE-2023-6931; "
                                      "stable 6.1.68 and 6.6.7): perf_event_validate_size() in kernel/events/core.c "
                                      "checks the leader's and every sibling's read size too, so a sibling that "
                                      "would take the leader's group read past 16 KiB is refused with E2BIG")
                               .backported({"6.1.68", "6.6.7"})},
              .defining = {"siblings", "predicted_siblings"},
              .shown = {"siblings", "predicted_siblings"},
              .kconfig = kPerfConfig}) {
  rlimit files{};
  check(getrlimit(RLIMIT_NOFILE, &files) == 0, "getrlimit(RLIMIT_NOFILE)");
  if (files.rlim_max < kMostSiblings + 16) throw ReproError("RLIMIT_NOFILE's hard limit is below the siblings asked");
  files.rlim_cur = files.rlim_max;
  check(setrlimit(RLIMIT_NOFILE, &files) == 0, "setrlimit(RLIMIT_NOFILE)");

  const PerfEvent leader = PerfEvent::open(counter(kLeaderFormat), 0, -1);
  int predicted = 0;
  while (leader_read_size(1 + predicted + 1) <= kReadLimit) ++predicted;
  std::vector<PerfEvent> siblings;
  siblings.reserve(kMostSiblings);
  int refusal = 0;
  while (static_cast<int>(siblings.size()) < kMostSiblings) {
    OpenAttempt got = PerfEvent::attempt(counter(0), 0, -1, leader.fd());
    if (!got.event) {
      refusal = got.err;
      break;
    }
    siblings.push_back(std::move(*got.event));
  }
  const int joined = static_cast<int>(siblings.size());
  report.add("siblings", static_cast<long long>(joined));
  report.add("predicted_siblings", static_cast<long long>(predicted));
  report.add("refused_with", std::string(refusal == 0 ? "nothing" : strerrorname_np(refusal)));
  release_together(std::move(siblings));
  if (refusal != 0 && refusal != E2BIG) {
    throw ReproError("sibling " + std::to_string(joined + 1) + " refused with " + strerrorname_np(refusal));
  }
  if (joined != predicted) {
    return report.decide(Verdict::kWrongCount, std::to_string(joined) + " siblings joined where the leader's 16 KiB "
                                               "read allows " + std::to_string(predicted));
  }
  report.decide(Verdict::kMeasured, "siblings joined up to the leader's read size, the next refused (E2BIG)");
}

SIGWAKE_CASE(group_read_inherited_regrouped,
             {.expected = {changed_at("6.6", "32671e3799ca", Verdict::kWrongCount, Verdict::kMeasured,
                                      "32671e3799ca \"perf: Disallow mis-matched inherited group reads\" (v6.6, "
                                      "CVE-2023-5717; stable 6.1.60 and 6.5.9, as Debian's changelogs place it): "
                                      "__perf_read_group_add() in kernel/events/core.c refuses (ECHILD) a child "
                                      "group whose generation or sibling count is not its parent's")
                               .backported({"6.1.60", "6.5.9"})},
              .defining = {"read"},
              .shown = {"read"},
              .kconfig = kPerfConfig}) {
  perf_event_attr attr = counter(PERF_FORMAT_GROUP);
  attr.inherit = 1;
  const PerfEvent leader = PerfEvent::open(attr, 0, -1);
  const PerfEvent first = PerfEvent::open(attr, 0, -1, leader.fd());
  // Not inherited: our context is then no clone of the child's, so perf never swaps the two at a context
  // switch (perf_event_context_sched_out()) and `second` joins the leader in our context, not the child's.
  const PerfEvent no_clone = PerfEvent::open(counter(0), 0, -1);
  const StoppedChild child;  // inherits the group as it is now: a leader and one sibling
  const PerfEvent second = PerfEvent::open(attr, 0, -1, leader.fd());  // ours grows; the child's copy does not
  std::uint64_t values[8] = {};
  const ssize_t got = read(leader.fd(), values, sizeof values);
  const int err = got < 0 ? errno : 0;
  report.add("read", std::string(got >= 0 ? std::to_string(got) + " bytes" : strerrorname_np(err)));
  if (got >= 0) {
    return report.decide(Verdict::kWrongCount, "read() summed a child's group of 2 into its parent's group of 3; it "
                                               "must fail with ECHILD");
  }
  if (err != ECHILD) throw ReproError(std::string("read() of the inherited group's leader: ") + strerror(err));
  report.decide(Verdict::kMeasured, "read() of a group its child inherited before it grew: ECHILD");
}

}  // namespace sigwake
