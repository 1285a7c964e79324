// PERF_RECORD_READ at a child's exit: an inherited event with inherit_stat
// writes, as each inherited copy's task exits, one READ record with that
// child's pid and its count (perf_event_exit_event() -> sync_child_event() ->
// perf_event_read_event() in kernel/events/core.c, into the parent's ring:
// perf_output_begin() writes an inherited copy's records as its parent).
// `perf record -s` builds its per-thread counts from them. Until c418d8b4d7a4
// "perf/core: Fix missing read event generation on task exit" (v6.19, and
// stable 6.18.2 and 6.17.13) sync_child_event() took the task from ctx->task,
// which the exit has already set to TASK_TOMBSTONE, and wrote none.
//  - exit_read_record: five children, each forked, run and reaped in turn;
//    the ring must hold one READ record naming each.
//  - exit_record_parent: the same children under an event with attr.task: each
//    copy writes a PERF_RECORD_EXIT naming the child and, as its parent, us.
// perf_mmap() refuses a buffer for an inherited event that follows a task on
// every CPU (EINVAL), so everything is pinned to CPU 0 and the event counts there.
// A second event in our context that is not inherited keeps a child's context
// from being a clone (perf_event_init_context()), so perf never swaps ours into
// a child at a context switch and a child always exits with its own copy.
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <set>

#include "lib/attrs.h"
#include "lib/budgets.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

constexpr int kChildren = 5;

perf_event_attr inherit_stat_attr() {
  perf_event_attr attr = blank_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
  attr.inherit = 1;
  attr.inherit_stat = 1;
  attr.exclude_kernel = 1;  // allowed at perf_event_paranoid 2
  attr.exclude_hv = 1;
  return attr;
}

// Five children, each forked, run and reaped in turn under `attr` (inherited), pinned to CPU 0 with the
// event and a plain one beside it; what the ring holds after. `children` gets their pids.
RecordRead children_exited(const perf_event_attr& attr, std::set<std::uint32_t>& children) {
  pin_to_cpu(0);
  PerfEvent event = PerfEvent::open(attr, 0, 0);
  perf_event_attr plain = attr;
  plain.inherit = 0;
  plain.inherit_stat = 0;
  const PerfEvent no_clone = PerfEvent::open(plain, 0, 0);
  RingBuffer ring = RingBuffer::map(event.fd(), 0);
  for (int i = 0; i < kChildren; ++i) {
    const pid_t child = fork();
    check(child >= 0, "fork");
    if (child == 0) {
      burn_cpu(1ms);  // a count of its own to report
      _exit(0);
    }
    int status = 0;
    check(waitpid(child, &status, 0) == child, "waitpid");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw ReproError("a child did not exit cleanly");
    children.insert(static_cast<std::uint32_t>(child));
  }
  RecordRead read = ring.consume();
  if (read.truncated) throw ReproError("the ring held a truncated record");
  return read;
}

// The pid a PERF_RECORD_READ names (its body starts with pid, tid).
std::optional<std::uint32_t> read_record_pid(const Record& record) {
  if (record.type != PERF_RECORD_READ || record.bytes.size() < sizeof(perf_event_header) + 8) return std::nullopt;
  std::uint32_t pid = 0;
  std::memcpy(&pid, record.bytes.data() + sizeof(perf_event_header), sizeof pid);
  return pid;
}

}  // namespace

SIGWAKE_CASE(exit_read_record,
             {.expected = {changed_at("6.19", "c418d8b4d7a4", Verdict::kNoRecord, Verdict::kMeasured,
                                      "c418d8b4d7a4 \"perf/core: Fix missing read event generation on task exit\" "
                                      "(v6.19; stable 6.18.2 da07fa873059, 6.17.13 e70bd000760a): "
                                      "perf_event_exit_event() hands the exiting task to sync_child_event(), which "
                                      "writes PERF_RECORD_READ for an inherit_stat event; before it, ctx->task was "
                                      "already TASK_TOMBSTONE there and no record was written")
                               .backported({"6.18.2", "6.17.13"})},
              .defining = {"read_records", "children_named"},
              .shown = {"read_records", "children_named"},
              .kconfig = kPerfConfig}) {
  std::set<std::uint32_t> children;
  const RecordRead read = children_exited(inherit_stat_attr(), children);
  int reads = 0;
  std::set<std::uint32_t> named;
  for (const Record& record : read.records) {
    if (const auto pid = read_record_pid(record)) {
      ++reads;
      if (children.contains(*pid)) named.insert(*pid);
    }
  }
  report.add("records", static_cast<long long>(read.records.size()));
  report.add("read_records", static_cast<long long>(reads));
  report.add("children_named", static_cast<long long>(named.size()));
  report.add("children", static_cast<long long>(kChildren));
  if (reads == 0) return report.decide(Verdict::kNoRecord, "five children exited, no PERF_RECORD_READ");
  if (reads != kChildren || named.size() != kChildren) {
    return report.decide(Verdict::kWrongCount, "not one PERF_RECORD_READ naming each exited child");
  }
  report.decide(Verdict::kMeasured, "one PERF_RECORD_READ per exited child");
}

SIGWAKE_CASE(exit_record_parent,
             {.expected = {changed_at("5.7", "f3bed55e8509", Verdict::kMisdelivered, Verdict::kMeasured,
                                      "f3bed55e8509 \"perf/core: fix parent pid/tid in task exit events\" (v5.7; "
                                      "stable 5.6.9): perf_event_task_output() in kernel/events/core.c names the "
                                      "exiting task's real_parent as ppid in PERF_RECORD_EXIT (before, current: the "
                                      "exiting child itself)")
                               .backported({"5.6.9"})},
              .defining = {"exit_records", "children_named", "parent_named"},
              .shown = {"exit_records", "parent_named"},
              .kconfig = kPerfConfig}) {
  perf_event_attr attr = blank_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
  attr.inherit = 1;
  attr.task = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  std::set<std::uint32_t> children;
  const RecordRead read = children_exited(attr, children);
  const auto ours = static_cast<std::uint32_t>(getpid());
  int exits = 0, parent_named = 0;
  std::set<std::uint32_t> named;
  for (const Record& record : read.records) {
    if (record.type != PERF_RECORD_EXIT || record.bytes.size() < sizeof(perf_event_header) + 16) continue;
    std::uint32_t pid = 0, ppid = 0;  // the body: pid, ppid, tid, ptid, time
    std::memcpy(&pid, record.bytes.data() + sizeof(perf_event_header), sizeof pid);
    std::memcpy(&ppid, record.bytes.data() + sizeof(perf_event_header) + 4, sizeof ppid);
    if (!children.contains(pid)) continue;
    ++exits;
    named.insert(pid);
    parent_named += ppid == ours;
  }
  report.add("exit_records", static_cast<long long>(exits));
  report.add("children_named", static_cast<long long>(named.size()));
  report.add("parent_named", static_cast<long long>(parent_named));
  if (exits == 0) return report.decide(Verdict::kNoRecord, "five children exited, no PERF_RECORD_EXIT names one");
  if (exits != kChildren || named.size() != kChildren) {
    return report.decide(Verdict::kWrongCount, "not one PERF_RECORD_EXIT naming each exited child");
  }
  if (parent_named != kChildren) {
    return report.decide(Verdict::kMisdelivered, std::to_string(kChildren - parent_named) + " of " +
                                                     std::to_string(kChildren) + " PERF_RECORD_EXIT name another "
                                                     "task than us as the child's parent");
  }
  report.decide(Verdict::kMeasured, "one PERF_RECORD_EXIT per exited child, each naming us as its parent");
}

}  // namespace sigwake
