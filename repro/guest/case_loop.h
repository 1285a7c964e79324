// The case loop, once for every target: each reproducer program, each of its
// cases in its own process, `repeat` times, in each privilege pass, with framed
// KTAP out. PID 1 in a guest (init.cc) and sigwake-run on a host (run_main.cc)
// differ only in how they enter a pass and where the framed lines go.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "lava_table.h"
#include "printk_clock.h"

namespace sigwake {

class KernelPathTracer;

// A privilege pass: "root", or "user-paranoidN": uid 65534 under perf_event_paranoid N.
struct Pass {
  std::string name;
  int uid = -1;  // -1: the loop's own
  std::string paranoid;  // empty: whatever the kernel has
};

// Fills `pass` from its name; false for a name that is no pass.
bool parse_pass(const std::string& name, Pass* pass);

// The passes named in "root,user-paranoid2,..."; each unknown name becomes a
// `# sigwake.warning=` line.
// One line of the runner's report: "# <key>=<value>", the key one of repro/protocol.json's report_keys.
std::string report_line(const std::string& key, const std::string& value);

std::vector<Pass> parse_passes(const std::string& names, const std::function<void(const std::string&)>& line);

constexpr int kNobody = 65534;
constexpr const char* kParanoidSysctl = "/proc/sys/kernel/perf_event_paranoid";
constexpr const char* kTaintedSysctl = "/proc/sys/kernel/tainted";

struct LoopConfig {
  std::vector<std::string> programs;  // paths, run in this order
  // The only runs to make, by name: a case's, or a program's without cases. Empty: every case. The harness
  // expands run --case's globs into these names (catalogue.py, Catalogue.named_runs), so no glob is matched here.
  std::vector<std::string> cases;
  std::vector<Pass> passes;
  long long repeat = 1;  // the most runs of each case
  // Adaptive repeats: a case whose first `agree` runs ended alike (the same verdict, or the same way of
  // failing to give one) stops there; one whose runs split runs all `repeat`. agree >= repeat: always all.
  long long agree = 1;
  std::chrono::milliseconds budget{0};  // each run's deadline
  // The upstream selftests (peers), each run once as the loop's own user after every pass.
  std::vector<std::string> peers;
  std::chrono::milliseconds peer_budget{0};
  // "pass/program/case" (case empty for a whole program; "peer/name/" for a peer): every run up to and including that one's
  // runs is left out. A fresh boot after a crash carries on past the case that was running.
  std::string resume_after;
  // In a LAVA job: what the lab shows for each run, said after its result line as `# sigwake.lava=`.
  LavaTable lava;
  bool confined = false;  // each run in a view without the console's ways in (confine.h): a guest's init
  // The kernel log's clock now and what it logged since (printk_clock.h), said as each run starts and ends: a
  // guest's.
  std::function<PrintkMark()> printk_clock;
  // The machine's own clock now (seconds since the epoch), said as each run starts: a native run's, whose clock
  // is the harness's. A guest's runs are placed by the printk clock and the boot's start instead.
  std::function<std::string()> wall_clock;
};

// The key of one invocation, as resume_after names it.
std::string run_key(const std::string& pass, const std::string& program, const std::string& case_name);

struct PassHooks {
  // Why this pass cannot run here (asked before the plan), or empty.
  std::function<std::string(const Pass&)> skip_reason;
  // Called as the pass begins (PID 1 sets perf_event_paranoid there), and as the selftests begin (as "peer").
  std::function<void(const Pass&)> enter;
};

// Emits `1..N`, `# sigwake.tainted=`, then per pass `# sigwake.pass=`,
// `# sigwake.paranoid=` (or `# sigwake.skip=` with the reason), then every run:
// `# sigwake.start=`, `# sigwake.case=`, `# sigwake.printk_start=` (with a printk clock; then any
// `# sigwake.printk_continued=`), `# sigwake.clock_start=` (with a wall clock), the program's KTAP as an indented
// subtest, `# sigwake.duration_us=`, `# sigwake.cpu_us=`, `# sigwake.exit=`, `# sigwake.strays=` (processes it left running, killed),
// `# sigwake.tainted=`
// (when it changed), `# sigwake.printk_end=`, `# sigwake.kernel_path.*=` (with a tracer), the result
// line, named "program.case [pass run k]"; for each run left out because the first
// `agree` runs agreed, `# sigwake.unneeded=<its number>` and a SKIP result line in its place (the
// plan counts every run `repeat` allows); with a LAVA table, `# sigwake.lava=<pass|fail|skip> <name>` after
// each run's result line; then each peer: `# sigwake.peer=<name>`,
// its TAP as a subtest, its duration, exit and taint, the result line "peer <name>";
// and `# sigwake.done=<runs>` last.
void run_cases(const LoopConfig& config, const PassHooks& hooks, KernelPathTracer* tracer,
               const std::function<void(const std::string&)>& line);

// The value of `key=` in a kernel-style command line, or `fallback`.
std::string option_value(const std::string& options, const std::string& key, const std::string& fallback);

// "a,b,,c" -> {"a", "b", "c"}.
std::vector<std::string> split(const std::string& text, char separator);

// A positive number, or `fallback`.
long long positive_or(const std::string& text, long long fallback);

std::string read_text(const char* path);

// A file's text without its trailing newlines (a sysctl, a token).
std::string read_value(const char* path);

}  // namespace sigwake
