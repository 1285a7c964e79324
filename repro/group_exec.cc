// Event groups across execve(): perf_event_exec() -> perf_event_remove_on_exec()
// in kernel/events/core.c takes every remove_on_exec event of the task that
// execs out of its context (perf_event_exit_event(): state EXIT); its fd, kept
// across the exec, stays open on the dead event. A child opens the events on
// itself without close-on-exec and execs into an image of this program that
// looks at them. The leader's enabled time (PERF_FORMAT_TOTAL_TIME_ENABLED)
// shows the removal: perf_event_read() brings only an active or inactive
// event's times up to date, so it moves while the task runs before the exec;
// after it the image enables the leader again, which starts an event the exec
// only disabled but not one it removed (state EXIT), and the time must stand
// still while a fresh event's moves (poll() cannot tell: an event with no ring
// mapped reports POLLHUP whatever its state).
//  - group_exec_removed_leader_join: a removed leader named as group_fd must be
//    refused (ENODEV), not take a sibling into a group that is no longer
//    scheduled ("perf: Reject exited events as group leaders", CVE-2026-74753).
//  - group_exec_removed_leader_siblings: a removed leader's plain sibling must
//    leave its group (DETACH_GROUP) and go on as a group of its own: read() of
//    the sibling with PERF_FORMAT_GROUP counts two events before the exec, one
//    after ("perf/core: Detach event groups during remove_on_exec",
//    CVE-2026-64556: left behind, it stays on the removed leader's list).
// Each image closes what joined the leader before the leader: where the
// leader's own group was undone, a member closed after it would stay on a
// freed leader's list.
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "lib/exec_child.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

using namespace std::chrono_literals;

constexpr std::size_t kMostMembers = 4;  // read() room: more than any group here has

perf_event_attr group_member(bool remove_on_exec) {
  perf_event_attr attr = blank_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED;
  attr.remove_on_exec = remove_on_exec;
  return attr;
}

// read() of a member: its group's size and the leader's enabled time (nr, time_enabled, then the values).
struct GroupRead {
  std::string error;  // one word: "err:" read()'s errno name, or "short:" a short read's size
  std::uint64_t members = 0, enabled_ns = 0;
};

GroupRead read_group(int fd) {
  std::uint64_t values[2 + kMostMembers] = {};
  const ssize_t got = read(fd, values, sizeof values);
  if (got < 0) return {.error = "err:" + errno_name(errno)};
  if (got < static_cast<ssize_t>(2 * sizeof values[0])) return {.error = "short:" + std::to_string(got)};
  return {.members = values[0], .enabled_ns = values[1]};
}

// "KEY=1" when the leader's enabled time moves while this task runs, "KEY=0" when it stands still, and
// "KEY_control=1" when a fresh event's moved across the same window (else the clock is too coarse to tell).
// With `enable_first`, PERF_EVENT_IOC_ENABLE comes first: it starts an event that was only disabled (OFF),
// never one that was removed (EXIT is below ERROR, which _perf_event_enable() leaves alone).
std::string enabled_time_moves(int leader, const std::string& key, bool enable_first) {
  std::string words;
  if (enable_first && ioctl(leader, PERF_EVENT_IOC_ENABLE, 0) != 0) {
    words += key + "_enable=err:" + errno_name(errno) + " ";
  }
  const OpenAttempt control = PerfEvent::attempt(group_member(false), 0, -1);
  if (!control.event) return words + key + "_control=err:" + errno_name(control.err) + " ";
  const GroupRead leader_before = read_group(leader), control_before = read_group(control.event->fd());
  GroupRead leader_after, control_after;
  for (int ms = 0; ms < 50; ++ms) {  // until the control moved: 1 ms of CPU is enough where the clock is fine
    burn_cpu(1ms);
    control_after = read_group(control.event->fd());
    if (!control_after.error.empty() || control_after.enabled_ns > control_before.enabled_ns) break;
  }
  leader_after = read_group(leader);
  const std::string errors = leader_before.error + leader_after.error + control_before.error + control_after.error;
  if (!errors.empty()) return words + key + "=" + errors + " ";
  return words + key + (leader_after.enabled_ns > leader_before.enabled_ns ? "=1 " : "=0 ") + key + "_control=" +
         (control_after.enabled_ns > control_before.enabled_ns ? "1 " : "0 ");
}

// The end of both images: closes `fds` in order, then says `words` on `to`.
int close_and_say(int to, std::string words, std::initializer_list<int> fds) {
  for (const int fd : fds) {
    if (close(fd) != 0) words += "close_failed=" + errno_name(errno) + " ";
  }
  const bool said = write(to, words.data(), words.size()) == static_cast<ssize_t>(words.size());
  return said && words.find("close_failed") == std::string::npos ? 0 : kExecSetupFailed;
}

using Seen = std::map<std::string, std::string>;

// Runs `body` in a child (its events on itself, kept across the exec; it says what it saw on the pipe and
// calls exec_with()), and returns every "key=value" word the child and its new image said, once the image
// ended cleanly. The leader's enabled time must have moved before the exec and stood still after it.
Seen watch_exec(Report& report, const std::function<void(const Pipe& said)>& body) {
  Pipe said;
  std::string words;
  const ExecChild end = run_exec_child([&] { body(said); }, [&](pid_t) {
    said.close_write_end();
    words = said.read_to_end();  // until the image ends (or the child, before its exec)
  });
  if (WIFEXITED(end.status) && WEXITSTATUS(end.status) == kExecRefused) end.raise_setup_failure();
  if (!WIFEXITED(end.status) || WEXITSTATUS(end.status) != 0) {
    throw ReproError("the child or its new image failed (wait status " + std::to_string(end.status) + "): " +
                     end.why + words);
  }
  Seen seen;
  std::istringstream in(words);
  for (std::string word; in >> word;) {
    const std::size_t eq = word.find('=');
    if (eq != std::string::npos) seen[word.substr(0, eq)] = word.substr(eq + 1);
  }
  report.add("live_enabled_moves", seen["live_enabled_moves"] == "1");
  report.add("removed_enabled_moves", seen["removed_enabled_moves"] == "1");
  if (seen["live_enabled_moves_control"] != "1" || seen["removed_enabled_moves_control"] != "1" ||
      seen["live_enabled_moves"] != "1") {
    throw ReproError("enabled times did not move where they must, so the leader's removal cannot be seen: " + words);
  }
  if (seen["removed_enabled_moves"] != "0") {
    throw ReproError("the exec did not remove the remove_on_exec leader (enabled again, its time moves), so this "
                     "case's path was never reached (sigtrap_remove_on_exec judges removal): " + words);
  }
  return seen;
}

// In the child: execs into `image` with the pipe's write end and `fds` as its arguments.
void exec_with(const char* image, const Pipe& said, std::initializer_list<int> fds) {
  std::vector<std::string> args = {std::to_string(said.keep_write_end_across_exec())};
  for (const int fd : fds) args.push_back(std::to_string(fd));
  exec_image(image, args);
}

}  // namespace

SIGWAKE_CASE(group_exec_removed_leader_join,
             {.expected = {fixed_by("fa091f46c383", Verdict::kMisdelivered, Verdict::kMeasured,
                                    "fa091f46c383 \"perf: Reject exited events as group leaders\" (CVE-2026-74753; "
                                    "stable 6.12.111 as Debian's changelog of linux 6.12.111-1 places it, not in "
                                    "6.1.192; in 7.2's tree; its upstream release is not confirmed here): "
                                    "perf_event_open() in kernel/events/core.c refuses (ENODEV) a group_fd whose "
                                    "event is PERF_EVENT_STATE_EXIT or below, as a remove_on_exec event is after exec")
                               .backported({"6.12.111"})},
              .defining = {"join"},
              .shown = {"join"},
              .kconfig = kPerfConfig}) {
  Seen seen = watch_exec(report, [](const Pipe& said) {
    const PerfEvent leader = PerfEvent::open(group_member(true), 0, -1, -1, 0);  // kept across the exec
    PerfEvent::open(group_member(false), 0, -1, leader.fd());  // the control: the live leader takes it (closed)
    said.send(enabled_time_moves(leader.fd(), "live_enabled_moves", false));
    exec_with("join_removed_leader", said, {leader.fd()});
  });
  const std::string join = seen["join"];
  report.add("join", join);
  if (join == "yes") {
    return report.decide(Verdict::kMisdelivered, "an event joined a group whose leader exec removed; "
                                                 "perf_event_open() must refuse it with ENODEV");
  }
  if (join != "ENODEV") throw ReproError("joining the removed leader was refused with " + join + ", not ENODEV");
  report.decide(Verdict::kMeasured, "the leader exec removed was refused as group_fd (ENODEV)");
}

// argv: the pipe, the leader. Names the removed leader as group_fd.
SIGWAKE_IMAGE(join_removed_leader) {
  if (argc != 2) return kExecSetupFailed;
  const int to = std::atoi(argv[0]), leader = std::atoi(argv[1]);
  std::string words = enabled_time_moves(leader, "removed_enabled_moves", true);
  {
    const OpenAttempt joined = PerfEvent::attempt(group_member(false), 0, -1, leader);
    words += "join=" + (joined.event ? std::string("yes") : errno_name(joined.err)) + " ";
  }  // a joined event is closed here, before its leader
  return close_and_say(to, words, {leader});
}

SIGWAKE_CASE(group_exec_removed_leader_siblings,
             {.expected = {fixed_by("037a3c43edfb", Verdict::kWrongCount, Verdict::kMeasured,
                                    "037a3c43edfb \"perf/core: Detach event groups during remove_on_exec\" "
                                    "(CVE-2026-64556; stable 6.1.192 and 6.12.96, as Debian's changelogs of linux "
                                    "6.1.192-1 and 6.12.96-1 place it; its upstream release is not confirmed "
                                    "here): perf_event_remove_on_exec() in kernel/events/core.c removes each event "
                                    "with DETACH_GROUP, so a removed leader's siblings become groups of their own")
                               .backported({"6.1.192", "6.12.96"})},
              .defining = {"members_before_exec", "members_after_exec"},
              .shown = {"members_before_exec", "members_after_exec"},
              .kconfig = kPerfConfig}) {
  Seen seen = watch_exec(report, [](const Pipe& said) {
    const PerfEvent leader = PerfEvent::open(group_member(true), 0, -1, -1, 0);  // both kept across the exec
    const PerfEvent sibling = PerfEvent::open(group_member(false), 0, -1, leader.fd(), 0);
    const GroupRead before = read_group(sibling.fd());
    said.send(enabled_time_moves(leader.fd(), "live_enabled_moves", false) + "members_before_exec=" +
              (before.error.empty() ? std::to_string(before.members) : before.error) + " ");
    exec_with("read_removed_group", said, {leader.fd(), sibling.fd()});
  });
  const std::string before = seen["members_before_exec"], after = seen["members_after_exec"];
  report.add("members_before_exec", before == "2" ? 2LL : -1LL);
  report.add("members_after_exec", after == "1" || after == "2" ? std::atoll(after.c_str()) : -1LL);
  if (before != "2") throw ReproError("the sibling read a group of " + before + " before the exec, not 2");
  if (after == "2") {
    return report.decide(Verdict::kWrongCount, "after the exec removed its leader the sibling still reads a group "
                                               "of 2: it was left in the removed leader's group");
  }
  if (after != "1") throw ReproError("read() of the sibling after the exec: " + after);
  report.decide(Verdict::kMeasured, "the sibling of the leader exec removed reads a group of its own");
}

// argv: the pipe, the leader, its sibling. Reads the sibling's group, then closes the sibling before the leader.
SIGWAKE_IMAGE(read_removed_group) {
  if (argc != 3) return kExecSetupFailed;
  const int to = std::atoi(argv[0]), leader = std::atoi(argv[1]), sibling = std::atoi(argv[2]);
  const GroupRead after = read_group(sibling);
  const std::string words = enabled_time_moves(leader, "removed_enabled_moves", true) + "members_after_exec=" +
                            (after.error.empty() ? std::to_string(after.members) : after.error) + " ";
  return close_and_say(to, words, {sibling, leader});
}

}  // namespace sigwake
