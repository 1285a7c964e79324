// sigwake-run: the case loop (case_loop.h) on this machine's own kernel, with
// the same framed KTAP as a guest's console, on stdout. The token is the first
// line of stdin (not an argument: any process of the user can read those).
//   sigwake-run [--timeout-ms N] [--repeat N] [--agree N] [--passes P,...] [--peer SELFTEST]... PROGRAM...
//   sigwake-run --protocol     the protocol as compiled in, for the test that holds
//                              C++ and Python to repro/protocol.json
// A pass runs where this host allows it, else it is skipped with the reason:
// the unprivileged passes need root (to become uid 65534), a path uid 65534 can
// reach, and the host's own perf_event_paranoid (sigwake never changes it).
// The kernel-path tracer follows every run when running as root.
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "../lib/kernel_path.h"
#include "case_loop.h"
#include "frame.h"
#include "protocol.h"

namespace {

// A directory or file uid 65534 cannot get through: the first one on `path`.
std::string unreachable_for_nobody(const std::string& path) {
  for (std::size_t end = path.find('/', 1);; end = path.find('/', end + 1)) {
    const std::string part = end == std::string::npos ? path : path.substr(0, end);
    struct stat st {};
    if (stat(part.c_str(), &st) != 0 || !(st.st_mode & S_IXOTH)) return part;
    if (end == std::string::npos) return "";
  }
}

std::string skip_reason(const sigwake::Pass& pass, const std::vector<std::string>& programs) {
  if (pass.uid < 0) return "";
  if (geteuid() != 0) return "becoming uid 65534 needs root";
  for (const std::string& program : programs) {
    if (const std::string blocked = unreachable_for_nobody(program); !blocked.empty()) {
      return "uid 65534 cannot reach " + blocked;
    }
  }
  const std::string paranoid = sigwake::read_value(sigwake::kParanoidSysctl);
  if (paranoid != pass.paranoid) return "the host's perf_event_paranoid is " + paranoid + "; sigwake does not change it";
  return "";
}

}  // namespace

// One line per rule: "verdict WORD ok|not-ok DIRECTIVE EXIT kernel|harness", then the rest.
void print_protocol() {
  namespace protocol = sigwake::protocol;
  for (const protocol::VerdictRule& r : protocol::kVerdictRules) {
    std::printf("verdict %s %s %s %d %s\n", r.word, r.ok ? "ok" : "not-ok", *r.directive ? r.directive : "-",
                r.exit_code, r.kernel ? "kernel" : "harness");
  }
  std::printf("passes %s\n", protocol::kAllPasses);
  std::printf("default repeat %lld\ndefault agree %lld\ndefault timeout_ms %lld\ndefault peer_timeout_ms %lld\n",
              protocol::kDefaultRepeat, protocol::kDefaultAgree, protocol::kDefaultTimeoutMs,
              protocol::kDefaultPeerTimeoutMs);
  std::printf("key timeout_ms %s\nkey repeat %s\nkey agree %s\nkey passes %s\nkey mode %s\nkey resume %s\n"
              "key cases %s\ntoken_file %s\nlava_file %s\n",
              protocol::kKeyTimeoutMs, protocol::kKeyRepeat, protocol::kKeyAgree, protocol::kKeyPasses,
              protocol::kKeyMode, protocol::kKeyResume, protocol::kKeyCases, protocol::kTokenFile, protocol::kLavaFile);
  for (const protocol::ReportKey& k : protocol::kReportKeys) std::printf("report %s %s\n", k.name, k.key);
}

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--protocol") {
    print_protocol();
    return 0;
  }
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);  // the token it read is closed to the reproducers (see init.cc)
  sigwake::LoopConfig config;
  config.budget = std::chrono::milliseconds(sigwake::protocol::kDefaultTimeoutMs);
  config.repeat = sigwake::protocol::kDefaultRepeat;
  config.agree = sigwake::protocol::kDefaultAgree;
  config.peer_budget = std::chrono::milliseconds(sigwake::protocol::kDefaultPeerTimeoutMs);
  std::string passes = "root";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--timeout-ms" && i + 1 < argc) {
      config.budget = std::chrono::milliseconds(sigwake::positive_or(argv[++i], sigwake::protocol::kDefaultTimeoutMs));
    } else if (arg == "--repeat" && i + 1 < argc) config.repeat = sigwake::positive_or(argv[++i], sigwake::protocol::kDefaultRepeat);
    else if (arg == "--agree" && i + 1 < argc) config.agree = sigwake::positive_or(argv[++i], sigwake::protocol::kDefaultAgree);
    else if (arg == "--passes" && i + 1 < argc) passes = argv[++i];
    else if (arg == "--cases" && i + 1 < argc) config.cases = sigwake::split(argv[++i], ',');
    else if (arg == "--peer" && i + 1 < argc) config.peers.push_back(argv[++i]);
    else if (arg.rfind("--", 0) == 0) {
      std::fprintf(stderr, "usage: sigwake-run [--timeout-ms N] [--repeat N] [--agree N] [--passes P,...] "
                           "[--cases NAME,...] [--peer SELFTEST]... PROGRAM...\n");
      return 2;
    } else config.programs.push_back(arg);
  }
  std::string token;
  std::getline(std::cin, token);
  sigwake::FramedWriter line(STDOUT_FILENO, token.empty() ? "unset" : token);
  line("KTAP version 1");
  line(sigwake::report_line(sigwake::protocol::kReportRelease, sigwake::read_value("/proc/sys/kernel/osrelease")));
  line(sigwake::report_line(sigwake::protocol::kReportVersion, sigwake::read_value("/proc/sys/kernel/version")));
  config.passes = sigwake::parse_passes(passes, std::ref(line));  // by reference: one sequence of frames
  config.wall_clock = [] {  // the harness places each run by it: the same clock as its own
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    char text[32];
    std::snprintf(text, sizeof text, "%lld.%06ld", static_cast<long long>(now.tv_sec), now.tv_nsec / 1000);
    return std::string(text);
  };
  sigwake::PassHooks hooks;
  hooks.skip_reason = [&config](const sigwake::Pass& pass) { return skip_reason(pass, config.programs); };
  // Loading BPF needs root; without it the results carry no kernel path.
  std::unique_ptr<sigwake::KernelPathTracer> tracer;
  if (geteuid() == 0) tracer = std::make_unique<sigwake::KernelPathTracer>();
  sigwake::run_cases(config, hooks, tracer.get(), std::ref(line));
  return 0;
}
