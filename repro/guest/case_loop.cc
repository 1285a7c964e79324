#include "case_loop.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "../lib/kernel_path.h"
#include "machine_probe.h"
#include "protocol.h"
#include "runner.h"

namespace sigwake {
namespace {

// A program's name: its file's.
std::string base_name(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

// Whether a run is one LoopConfig::cases names (a case's name, or a program's without cases).
bool selected(const std::vector<std::string>& names, const std::string& name) {
  return names.empty() || std::find(names.begin(), names.end(), name) != names.end();
}

// A case as its program lists it: its name, then what it must be granted (lib/grants.h).
struct ListedCase {
  std::string name;
  std::vector<std::string> grants;
};

// A program and its cases; no cases: it could not list them, so it runs whole.
struct Program {
  std::string path;
  std::string name;
  std::vector<ListedCase> cases;
};

Program list_cases(const std::string& path, std::chrono::milliseconds budget, bool confined) {
  const RunOutcome listing = run_with_deadline({path, "--list"}, budget, RunLimits{.confined = confined});
  Program program{path, base_name(path), {}};
  if (!listing.exited || listing.exit_code != 0) return program;
  for (const std::string& line : split(listing.output, '\n')) {
    const std::vector<std::string> words = split(line, ' ');
    if (!words.empty()) program.cases.push_back({words.front(), std::vector<std::string>(words.begin() + 1, words.end())});
  }
  return program;
}

std::string result_line(std::size_t number, const std::string& name, const RunOutcome& run) {
  const std::string id = std::to_string(number) + " " + name;
  if (run.timed_out) return "not ok " + id + " # TIMEOUT killed at the deadline";
  if (run.strays > 0) return "not ok " + id + " # ERROR left " + std::to_string(run.strays) + " processes running";
  if (!run.exited) return "not ok " + id + " # ERROR killed by signal " + std::to_string(run.term_signal);
  if (run.exit_code == 0) return "ok " + id;
  if (run.exit_code == 4) return "ok " + id + " # SKIP";
  return "not ok " + id;
}

// What every run prints after it ends: its output as a KTAP subtest, its duration, exit and the kernel's taint
// flags when the run changed them (and then true).
bool report_run(const RunOutcome& outcome, std::string& tainted,
                const std::function<void(const std::string&)>& line) {
  std::istringstream lines(outcome.output);
  for (std::string text; std::getline(lines, text);) line("    " + text);
  line(report_line(protocol::kReportDurationUs, std::to_string(outcome.duration_us)));
  line(report_line(protocol::kReportCpuUs, std::to_string(outcome.cpu_us)));
  if (outcome.exited) line(report_line(protocol::kReportExit, std::to_string(outcome.exit_code)));
  if (outcome.strays > 0) line(report_line(protocol::kReportStrays, std::to_string(outcome.strays)));
  const std::string now = read_value(kTaintedSysctl);
  if (now == tainted) return false;
  tainted = now;
  line(report_line(protocol::kReportTainted, tainted));
  return true;
}

// The verdict word a run's case printed last, or "" (it timed out, was killed, or printed none).
std::string verdict_of(const RunOutcome& run) {
  if (run.timed_out || !run.exited) return "";
  const std::string key = "# verdict=";
  const std::size_t at = run.output.rfind(key);
  if (at == std::string::npos) return "";
  const std::size_t start = at + key.size();
  return run.output.substr(start, run.output.find('\n', start) - start);
}

// What a LAVA lab is told of a run: its verdict only when the exit code is that verdict's (the harness holds a
// reproducer to both, parse/outcome.py) and it left nothing running (a daemon could have acted for it: the
// harness counts such a run for nothing), else none, which fails there.
std::string agreed_verdict(const RunOutcome& run) {
  if (run.strays > 0) return "";
  const std::string verdict = verdict_of(run);
  for (const protocol::VerdictRule& rule : protocol::kVerdictRules) {
    if (verdict == rule.word) return run.exit_code == rule.exit_code ? verdict : "";
  }
  return "";
}

// How one run ended, for adaptive repeats: its case's verdict line, or how it failed to give one.
std::string ending(const RunOutcome& run) {
  if (run.timed_out) return "timeout";
  if (!run.exited) return "signal " + std::to_string(run.term_signal);
  const std::string verdict = verdict_of(run);
  return "verdict " + (verdict.empty() ? "none" : verdict) + " exit " + std::to_string(run.exit_code) +
         (run.strays > 0 ? " strays" : "");
}

// The kernel log's clock (under `key`, if any), when the loop has one and the kernel a log; then the kernel's
// console lines since the last mark that continue a record of its own (printk_clock.h), and whether any record
// went unread.
void say_clock(const LoopConfig& config, const char* key, const std::function<void(const std::string&)>& line) {
  if (!config.printk_clock) return;
  const PrintkMark mark = config.printk_clock();
  if (key != nullptr && !mark.now.empty()) line(report_line(key, mark.now));
  for (const std::string& continued : mark.continued) line(report_line(protocol::kReportPrintkContinued, continued));
  if (mark.lost > 0) {
    line(report_line(protocol::kReportWarning, "the kernel overwrote log records before the init read them (" +
                                                   std::to_string(mark.lost) + " times, by " + (key ? key : "the end") +
                                                   "): a console line they continued could pass for a report's"));
  }
}

// The machine's clock as a run starts, when the loop has one (a native run's).
void say_wall_clock(const LoopConfig& config, const std::function<void(const std::string&)>& line) {
  if (config.wall_clock) line(report_line(protocol::kReportClockStart, config.wall_clock()));
}

}  // namespace

bool parse_pass(const std::string& name, Pass* pass) {
  const std::string prefix = "user-paranoid";
  if (name == "root") {
    *pass = Pass{name, -1, ""};
    return true;
  }
  if (name.rfind(prefix, 0) == 0 && name.size() > prefix.size()) {
    *pass = Pass{name, kNobody, name.substr(prefix.size())};
    return true;
  }
  return false;
}

std::string report_line(const std::string& key, const std::string& value) { return "# " + key + "=" + value; }

std::vector<Pass> parse_passes(const std::string& names, const std::function<void(const std::string&)>& line) {
  std::vector<Pass> passes;
  for (const std::string& name : split(names, ',')) {
    Pass pass;
    if (parse_pass(name, &pass)) passes.push_back(pass);
    else line(report_line(protocol::kReportWarning, "unknown pass " + name));
  }
  return passes;
}

std::string read_value(const char* path) {
  std::string text = read_text(path);
  text.erase(text.find_last_not_of("\n") + 1);
  return text;
}

std::string read_text(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string option_value(const std::string& options, const std::string& key, const std::string& fallback) {
  std::istringstream words(options);
  for (std::string word; words >> word;) {
    if (word.rfind(key + "=", 0) == 0) return word.substr(key.size() + 1);
  }
  return fallback;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, separator);) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

long long positive_or(const std::string& text, long long fallback) {
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  return end != text.c_str() && *end == '\0' && value > 0 ? value : fallback;
}

std::string run_key(const std::string& pass, const std::string& program, const std::string& case_name) {
  return pass + "/" + program + "/" + case_name;
}

void run_cases(const LoopConfig& config, const PassHooks& hooks, KernelPathTracer* tracer,
               const std::function<void(const std::string&)>& line) {
  std::vector<Program> programs;
  for (const std::string& path : config.programs) programs.push_back(list_cases(path, config.budget, config.confined));
  std::vector<std::string> refused;  // said once the plan is out
  for (Program& program : programs) {
    for (ListedCase& c : program.cases) {
      if (c.grants.empty() || may_be_granted(program.path)) continue;
      std::string asked;
      for (const std::string& grant : c.grants) asked += " " + grant;
      refused.push_back(program.name + "." + c.name + " asks for" + asked + ", which no case of " + program.name +
                        " is granted (repro/guest/runner.cc): it runs without");
      c.grants.clear();
    }
  }

  // The plan: each pass's invocations (each case in its own process), those up to the resume key left out.
  struct Invocation {
    const Program* program;
    std::vector<std::string> argv;
    std::vector<std::string> grants;
  };
  std::vector<std::string> skipped(config.passes.size());
  std::vector<std::vector<Invocation>> planned(config.passes.size());
  bool resuming = !config.resume_after.empty();
  std::size_t runs = 0;
  for (std::size_t i = 0; i < config.passes.size(); ++i) {
    skipped[i] = hooks.skip_reason ? hooks.skip_reason(config.passes[i]) : "";
    for (const Program& program : programs) {
      std::vector<Invocation> invocations;
      for (const ListedCase& c : program.cases) invocations.push_back({&program, {program.path, "--case", c.name}, c.grants});
      if (invocations.empty()) invocations.push_back({&program, {program.path}, {}});
      for (Invocation& invocation : invocations) {
        const auto& argv = invocation.argv;
        if (!selected(config.cases, argv.size() == 3 ? argv[2] : program.name)) continue;
        const std::string key = run_key(config.passes[i].name, program.name, argv.size() == 3 ? argv[2] : "");
        if (resuming) {
          resuming = key != config.resume_after;
          continue;
        }
        if (skipped[i].empty()) planned[i].push_back(std::move(invocation));
      }
    }
    runs += planned[i].size() * config.repeat;
  }
  std::vector<std::string> peers;  // those left to run
  for (const std::string& path : config.peers) {
    const std::string key = run_key("peer", base_name(path), "");
    if (resuming) {
      resuming = key != config.resume_after;
      continue;
    }
    peers.push_back(path);
  }
  runs += peers.size();
  line("1.." + std::to_string(runs));
  for (const std::string& why : refused) line(report_line(protocol::kReportWarning, why));
  // The kernel's taint flags, at the start and after every run that changed them: a splat's before and after.
  std::string tainted = read_value(kTaintedSysctl);
  line(report_line(protocol::kReportTainted, tainted));

  std::size_t number = 0;
  for (std::size_t i = 0; i < config.passes.size(); ++i) {
    const Pass& pass = config.passes[i];
    if (!config.resume_after.empty() && planned[i].empty() && skipped[i].empty()) continue;  // ran before
    line(report_line(protocol::kReportPass, pass.name));
    if (!skipped[i].empty()) {
      line(report_line(protocol::kReportSkip, skipped[i]));
      continue;
    }
    if (hooks.enter) hooks.enter(pass);
    line(report_line(protocol::kReportParanoid, read_value(kParanoidSysctl)));
    for (const Invocation& invocation : planned[i]) {
      const Program& program = *invocation.program;
      const auto& argv = invocation.argv;
      std::string first_ending;
      bool alike = true;  // every run so far ended as the first did
      const std::string case_name = program.name + (argv.size() == 3 ? "." + argv[2] : "");
      for (long long run = 0; run < config.repeat; ++run) {
        const std::string name = case_name + " [" + pass.name + " run " + std::to_string(run + 1) + "]";
        if (alike && run >= config.agree) {  // the first `agree` runs ended alike: this one is not needed
          line(report_line(protocol::kReportUnneeded, std::to_string(run + 1)));
          line("ok " + std::to_string(++number) + " " + name + " # SKIP the first " + std::to_string(config.agree) +
               " runs agreed");
          if (!config.lava.empty()) line(report_line(protocol::kReportLava, "skip " + name));
          continue;
        }
        line(report_line(protocol::kReportStart, program.name));
        if (argv.size() == 3) line(report_line(protocol::kReportCase, argv[2]));
        say_clock(config, protocol::kReportPrintkStart, line);
        say_wall_clock(config, line);
        const RunLimits limits{.uid = pass.uid, .grants = invocation.grants, .confined = config.confined};
        const RunOutcome outcome = run_with_deadline(argv, config.budget, limits, [tracer](pid_t pid) {
          if (tracer != nullptr) tracer->follow(pid);
        });
        say_clock(config, protocol::kReportPrintkEnd, line);
        const bool tainted_by_run = report_run(outcome, tainted, line);
        if (tracer != nullptr) {
          for (const auto& [function, value] : tracer->counts()) {
            line(report_line(protocol::kReportKernelPath + function, value));
          }
        }
        const std::string ended = ending(outcome);
        if (run == 0) first_ending = ended;
        alike = alike && ended == first_ending;
        // Unique per run, and checked by the harness: program.case, its pass and which run of it.
        line(result_line(++number, name, outcome));
        if (!config.lava.empty()) {  // a run that tainted the kernel (a WARN) fails there, whatever its verdict
          const std::string shown = tainted_by_run ? "fail" : config.lava.result(pass.name, case_name, agreed_verdict(outcome));
          line(report_line(protocol::kReportLava, shown + " " + name));
        }
      }
    }
  }
  // What the selftests need of the machine, said before they run (a case needs none of it: software events).
  if (!peers.empty()) {
    if (hooks.enter) hooks.enter(Pass{"peer", -1, ""});  // root's rules, whichever pass ran last
    for (const Capability& capability : probe_machine()) {
      line(report_line(protocol::kReportMachine + capability.name,
                       (capability.present ? "yes: " : "no: ") + capability.detail));
    }
  }
  for (const std::string& path : peers) {
    const std::string name = base_name(path);
    line(report_line(protocol::kReportPeer, name));
    say_clock(config, protocol::kReportPrintkStart, line);
    say_wall_clock(config, line);
    const RunOutcome outcome = run_with_deadline({path}, config.peer_budget, RunLimits{.confined = config.confined});
    say_clock(config, protocol::kReportPrintkEnd, line);
    report_run(outcome, tainted, line);
    line(result_line(++number, "peer " + name, outcome));
  }
  say_clock(config, nullptr, line);  // what the kernel logged after the last run, read too
  line(report_line(protocol::kReportDone, std::to_string(number)));  // all reported
}

}  // namespace sigwake
