// What a case says about itself, next to its code (as LTP's tst_test carries
// .tags, .min_kver and .needs_kconfigs): the kernel behaviour it expects, with
// the source of that knowledge and the commit that changed it; the evidence
// that defines it beyond its verdict and what a report shows of it; the kernel
// options it needs. `PROGRAM --list --json` prints them; the harness judges and
// reports with them. They never decide a verdict: only the kernel does.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "protocol.h"

namespace sigwake {

using Words = std::vector<std::string_view>;

// A known behaviour. Narrower ones (some passes, some kernel origins) come
// first in a case's list: the first that applies decides.
struct Expectation {
  Verdict before = Verdict::kNone;  // on kernels older than `since`
  Verdict after = Verdict::kNone;   // from `since` on (every kernel when there is no `since`)
  std::string_view since;           // "6.10": the upstream release that changed it (none: see fixed_by())
  std::string_view commit;          // the commit that changed it there
  Words stable;                     // "6.18.2": stable releases whose branch has `after` from then on, before `since`
  std::string source;               // where this is known from: the kernel's code, commit, manual
  Words passes;                     // the privilege passes it speaks of; none: every pass
  Words origins;                    // the kernel origins it speaks of (debian, file, host); none: all

  Expectation in_passes(Words p) const;
  Expectation of_origins(Words o) const;
  Expectation backported(Words releases) const;
};

// The same on every kernel.
Expectation always(Verdict verdict, std::string source);
// `after` on every kernel, by a fix whose upstream release could not be confirmed (only the stable
// releases that carry it, via backported()): a kernel showing `before` lacks it ("missing fix").
Expectation fixed_by(std::string_view commit, Verdict before, Verdict after, std::string source);
// `before`, then `after` from release `since` on, changed by `commit`.
Expectation changed_at(std::string_view since, std::string_view commit, Verdict before, Verdict after,
                       std::string source);

struct Facts {
  std::vector<Expectation> expected;
  Words defining;  // evidence compared beyond the verdict word (validate-patch): a change there is a change
  Words shown;     // evidence a report's cell shows, in this order
  Words kconfig;   // the kernel options it needs (CONFIG_...)
  Words peers;     // upstream selftest programs (tools/testing/selftests/perf_events) whose tests it compares with
  int cpus = 1;    // the CPUs it needs online: with fewer it is `unsupported`, which a boot of fewer vCPUs explains
  Words grants;    // what the runner withholds that it needs (grants.h), said why beside the case
};

// Evidence sets most cases share (evidence.h's helpers report them).
inline const Words kSiginfoEvidence = {"si_signo", "si_code", "si_band"};
inline const Words kShownSignal = {"records", "pollin", "signals", "si_code"};
Words operator+(Words a, const Words& b);

// The known behaviour of cases whose signal can come only from the ring
// buffer's output wakeup (perf_output_wakeup()): fd20bb51ed39 (v6.10).
Expectation watermark_fix();
// The known behaviour of cases whose signal comes from a sample overflow
// (__perf_event_overflow()), on every kernel.
Expectation overflow_signal();
// A BPF program of one's own needs CAP_BPF or CAP_SYS_ADMIN in the user passes.
Expectation bpf_needs_privilege();
// A case that changes a machine-wide sysctl (lib/sysctl.h): root only, so unsupported in the user passes, and
// never on a host the programs run on natively.
Expectation root_writes(std::string_view setting);
Expectation booted_machine_only(std::string_view setting);

// The kernel options cases need.
inline const Words kPerfConfig = {"CONFIG_PERF_EVENTS"};
inline const Words kBpfConfig = {"CONFIG_PERF_EVENTS", "CONFIG_BPF_SYSCALL", "CONFIG_BPF_EVENTS"};

inline const Words kUserPasses = {"user-paranoid1", "user-paranoid2", "user-paranoid3"};

// One program's cases as JSON (harness/sigwake/core/schemas/case-facts.v4.json).
struct NamedFacts {
  std::string_view name;
  const Facts* facts;
};
std::string facts_json(const std::vector<NamedFacts>& cases);

}  // namespace sigwake
