// Whom may a FASYNC signal reach? send_sigio() asks sigio_perm() (fs/fcntl.c)
// for each task of the owner: the credentials F_SETOWN recorded (fown->uid and
// euid, the caller's at that moment) must be allowed to signal the task the way
// kill(2) allows it: an effective uid of root, or the real or effective uid of
// the owner equal to the real or saved uid of the task. The task's effective uid
// plays no part. Unchanged since Linux 2.6; fcntl(2) documents it.
//
// Six witnesses, one per side of that rule, form a process group of their own;
// F_SETOWN names the group with our credentials changed to a real and an
// effective uid of no one else; a sample overflow of our own task-clock event
// then signals the group. Exactly the witnesses the rule allows must get it.
//  - sigio_permission_user_owner: a real uid A, an effective uid B: each of
//    the four uid matches lets one witness in; a task whose effective uid is A,
//    and a stranger, get nothing.
//  - sigio_permission_root_owner: an effective uid of root reaches all six.
// Moving between uids needs CAP_SETUID: the user passes are refused (EPERM).
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "lib/attrs.h"
#include "lib/budgets.h"
#include "lib/evidence.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

constexpr uid_t kA = 61001, kB = 61002, kStranger = 61003;
constexpr std::uint64_t kPeriodNs = 100'000;

struct Credentials {
  uid_t real, effective, saved;
};

struct WitnessRow {
  const char* name;
  Credentials credentials;
  bool allowed_by_user_owner;  // the rule for an owner with real uid A, effective uid B
};

constexpr std::array<WitnessRow, 6> kWitnesses{{
    {"real_is_owner_real", {kA, kStranger, kStranger}, true},
    {"saved_is_owner_real", {kStranger, kStranger, kA}, true},
    {"real_is_owner_effective", {kB, kStranger, kStranger}, true},
    {"saved_is_owner_effective", {kStranger, kStranger, kB}, true},
    {"effective_is_owner_real", {kStranger, kA, kStranger}, false},
    {"stranger", {kStranger, kStranger, kStranger}, false},
}};

void set_credentials(const Credentials& c, const std::string& what) {
  if (setresuid(c.real, c.effective, c.saved) != 0) {
    if (errno == EPERM) throw Unsupported(errno_text(what + ": moving between uids needs CAP_SETUID"));
    check(false, what);
  }
}

// The witnesses' group owns the event's signals with the variant's credentials
// as ours at F_SETOWN; our own task-clock overflows until the first sample. Decides
// delivered when exactly the witnesses the rule allows got the signal (all of
// them for an owner whose effective uid is root), misdelivered otherwise.
}  // namespace

SIGWAKE_VARIANT_CASE(sigio_permission, Credentials) {
  const Credentials& owner = variant;
  const bool owner_is_root = owner.effective == 0;
  set_credentials(owner, "setresuid(owner)");  // refused in the user passes: before anything is forked
  set_credentials({0, 0, 0}, "setresuid(back to root)");

  std::vector<std::unique_ptr<SignalWitness>> witnesses;
  pid_t group = 0;
  for (const WitnessRow& row : kWitnesses) {
    witnesses.push_back(std::make_unique<SignalWitness>(SIGIO, [&row, group] {
      check(setpgid(0, group) == 0, "setpgid(witness)");
      check(setresuid(row.credentials.real, row.credentials.effective, row.credentials.saved) == 0,
            "setresuid(witness)");
    }));
    if (group == 0) group = witnesses.front()->pid();
  }

  PerfEvent event =
      PerfEvent::open(task_clock_overflow_attr(kPeriodNs, ring_data_bytes(kOverflowRingPagesLog2)), 0, -1);
  set_credentials(owner, "setresuid(owner)");
  event.request_signals(-group, SIGIO);
  set_credentials({0, 0, 0}, "setresuid(back to root)");
  RingBuffer ring = RingBuffer::map(event.fd(), kOverflowRingPagesLog2);
  event.enable();
  const Deadline deadline(kWakeupBudget);
  while (ring.head() == 0 && !deadline.expired()) burn_cpu(1ms);
  event.disable();

  report.add("owner_uid", static_cast<long long>(owner.real));
  report.add("owner_euid", static_cast<long long>(owner.effective));
  const int records = add_record_evidence(report, ring.consume());
  // The allowed first, each with the grace; by then send_sigio() has walked the
  // whole group in the same call, so each of the others is asked whether a
  // signal came, with no window to wait out.
  int allowed = 0, reached = 0, wrong = 0;
  std::string wrong_names;
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t i = 0; i < kWitnesses.size(); ++i) {
      const bool should = owner_is_root || kWitnesses[i].allowed_by_user_owner;
      if (should != (pass == 0)) continue;
      const bool got = should ? witnesses[i]->received() : witnesses[i]->signalled_by_now();
      report.add(std::string("signalled_") + kWitnesses[i].name, got);
      allowed += should;
      reached += got;
      if (got != should) {
        ++wrong;
        wrong_names += (wrong_names.empty() ? "" : ", ") + std::string(kWitnesses[i].name);
      }
    }
  }
  if (records == 0) return report.decide(Verdict::kNoRecord, "no sample of our task-clock event");
  if (reached == 0) return report.decide(Verdict::kNotDelivered, "no witness got a signal");
  if (wrong > 0) {
    return report.decide(Verdict::kMisdelivered, "the kill(2) rule and the kernel disagree on " + wrong_names);
  }
  report.decide(Verdict::kDelivered, "exactly the " + std::to_string(allowed) + " witnesses the rule allows");
}

namespace {

Facts permission_facts() {
  return {.expected = {always(Verdict::kUnsupported,
                              "setresuid() to uids other than one's own needs CAP_SETUID (__sys_setresuid() in "
                              "kernel/sys.c, EPERM): only the root pass can make the owners and witnesses of other "
                              "uids")
                           .in_passes(kUserPasses),
                       always(Verdict::kDelivered,
                              "send_sigio() in fs/fcntl.c signals only the tasks sigio_perm() allows: fown->euid "
                              "root, or fown->uid or fown->euid (the caller's at F_SETOWN, f_modown()) equal to the "
                              "task's real or saved uid, as kill(2) allows (fcntl(2)); unchanged since Linux 2.6")},
          .shown = {"records"},
          .kconfig = kPerfConfig};
}

}  // namespace

SIGWAKE_VARIANT(sigio_permission, user_owner, (Credentials{kA, kB, 0}), {permission_facts()});
SIGWAKE_VARIANT(sigio_permission, root_owner, (Credentials{kA, 0, 0}), {permission_facts()});

}  // namespace sigwake
