// Event groups across execve(): perf_event_exec() -> perf_event_remove_on_exec()
// in kernel/events/core.c removes every remove_on_exec event of the task that
// execs (perf_event_exit_event(): state EXIT, out of the context); the event's
// fd, kept across the exec, stays open on a dead event, which poll() reports
// as POLLHUP (is_event_hup()). A child opens the events on itself, without
// close-on-exec, and execs into an image of this program that looks at them.
//  - group_exec_removed_leader_join: a removed event named as group_fd must be
//    refused (ENODEV), not take a sibling into a group that is no longer
//    scheduled ("perf: Reject exited events as group leaders", CVE-2026-74753).
//  - group_exec_removed_leader_siblings: a removed leader's plain sibling must
//    leave its group (DETACH_GROUP) and go on as a group of its own: read() of
//    the sibling with PERF_FORMAT_GROUP counts one event after the exec, two
//    before ("perf/core: Detach event groups during remove_on_exec",
//    CVE-2026-64556; left in the stale group, closing the leader first then
//    links it twice into its context's active list). The image closes the
//    sibling first, so a kernel with the bug is shown, not crashed.
#include <linux/perf_event.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>
#include <string>

#include "lib/exec_child.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

perf_event_attr group_member(bool remove_on_exec) {
  perf_event_attr attr = blank_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.read_format = PERF_FORMAT_GROUP;
  attr.remove_on_exec = remove_on_exec;
  return attr;
}

// read() of a PERF_FORMAT_GROUP event: how many events its group has (the first u64), or read()'s errno name.
std::string group_members(int fd) {
  std::uint64_t values[8] = {};
  return read(fd, values, sizeof values) > 0 ? std::to_string(values[0]) : strerrorname_np(errno);
}

using Seen = std::map<std::string, std::string>;
using ExecInto = std::function<void(const std::string& fds)>;

// Forks a child that runs `open_events` (its events on itself, kept across the exec), which calls the
// ExecInto it is given with their fds: the child execs into the image `after_exec_group` with them and a pipe
// for its words. Returns what the image saw ("key=value" words), its leader_hup reported.
Seen look_after_exec(Report& report, const std::function<void(const ExecInto&)>& open_events) {
  Pipe seen;
  std::string words;
  const ExecChild end = run_exec_child(
      [&] {
        open_events([&](const std::string& fds) {
          const std::string to = std::to_string(seen.keep_write_end_across_exec());
          close(STDOUT_FILENO);  // the new image is no case: no KTAP of ours
          execl("/proc/self/exe", "group_exec", "--image", "after_exec_group", to.c_str(), fds.c_str(), nullptr);
        });
      },
      [&](pid_t) {
        seen.close_write_end();
        words = seen.read_to_end();  // until the image ends (or the child, before its exec)
      });
  end.raise_setup_failure();
  if (!WIFEXITED(end.status) || WEXITSTATUS(end.status) != 0) {
    throw ReproError("the new image did not end cleanly (status " + std::to_string(end.status) + "): " + words);
  }
  Seen got;
  std::istringstream in(words);
  for (std::string word; in >> word;) {
    const std::size_t eq = word.find('=');
    if (eq != std::string::npos) got[word.substr(0, eq)] = word.substr(eq + 1);
  }
  report.add("leader_hup", got["leader_hup"] == "1");
  if (got["leader_hup"] != "1") throw ReproError("after the exec the remove_on_exec leader was not POLLHUP: " + words);
  return got;
}

std::string fd_text(const PerfEvent& event) { return std::to_string(event.fd()); }

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
  Seen got = look_after_exec(report, [](const ExecInto& exec_into) {
    const PerfEvent leader = PerfEvent::open(group_member(true), 0, -1, -1, 0);  // kept across the exec
    PerfEvent::open(group_member(false), 0, -1, leader.fd());  // the control: the live leader takes it (closed)
    exec_into("join:" + fd_text(leader));
  });
  const std::string join = got["join"];
  report.add("join", join);
  if (join == "yes") {
    return report.decide(Verdict::kMisdelivered, "an event joined a group whose leader exec removed; "
                                                 "perf_event_open() must refuse it with ENODEV");
  }
  if (join != "ENODEV") throw ReproError("joining the removed leader was refused with " + join + ", not ENODEV");
  report.decide(Verdict::kMeasured, "the leader exec removed was refused as group_fd (ENODEV)");
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
  Seen got = look_after_exec(report, [](const ExecInto& exec_into) {
    const PerfEvent leader = PerfEvent::open(group_member(true), 0, -1, -1, 0);  // both kept across the exec
    const PerfEvent sibling = PerfEvent::open(group_member(false), 0, -1, leader.fd(), 0);
    exec_into("siblings:" + fd_text(leader) + ":" + fd_text(sibling) + ":" + group_members(sibling.fd()));
  });
  const std::string before = got["members_before_exec"], after = got["members_after_exec"];
  report.add("members_before_exec", std::atoll(before.c_str()));
  report.add("members_after_exec", after == "1" || after == "2" ? std::atoll(after.c_str()) : -1LL);
  if (before != "2") throw ReproError("the sibling read a group of " + before + " before the exec, not 2");
  if (after == "2") {
    return report.decide(Verdict::kWrongCount, "after the exec removed its leader the sibling still reads a group "
                                               "of 2: it was left in the removed leader's group");
  }
  if (after != "1") throw ReproError("read() of the sibling after the exec: " + after);
  report.decide(Verdict::kMeasured, "the sibling of the leader exec removed reads a group of its own");
}

// The image both cases exec into: argv[0] the pipe for its words, argv[1] "join:LEADER" or
// "siblings:LEADER:SIBLING:MEMBERS_BEFORE". It closes the sibling before the leader (the order a kernel
// without DETACH_GROUP survives) and reports leader_hup, then join or members_*.
SIGWAKE_IMAGE(after_exec_group) {
  if (argc != 2) return kExecSetupFailed;
  const int to = std::atoi(argv[0]);
  std::istringstream spec(argv[1]);
  std::string mode, field;
  std::getline(spec, mode, ':');
  std::getline(spec, field, ':');
  const int leader = std::atoi(field.c_str());
  std::ostringstream words;
  pollfd look{leader, POLLIN, 0};
  words << "leader_hup=" << (poll(&look, 1, 0) == 1 && (look.revents & POLLHUP) ? 1 : 0);
  if (mode == "join") {
    perf_event_attr attr = group_member(false);
    const int joined = static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, leader, 0UL));
    words << " join=" << (joined >= 0 ? "yes" : strerrorname_np(errno));
    if (joined >= 0) close(joined);
  } else if (mode == "siblings") {
    std::getline(spec, field, ':');
    const int sibling = std::atoi(field.c_str());
    std::getline(spec, field, ':');
    words << " members_before_exec=" << field << " members_after_exec=" << group_members(sibling);
    close(sibling);
  } else {
    return kExecSetupFailed;
  }
  close(leader);
  const std::string text = words.str();
  return write(to, text.data(), text.size()) == static_cast<ssize_t>(text.size()) ? 0 : kExecSetupFailed;
}

}  // namespace sigwake
