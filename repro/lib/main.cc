// main() for every reproducer: runs its cases in order, prints one KTAP
// document, exits with kselftest codes (1 if any case failed or erred, 4 if
// every case was skipped, else 0).
//   PROGRAM               every case
//   PROGRAM --case NAME   that case alone (the guest runs each in its own process)
//   PROGRAM --list        the case names, one per line, each with its grants (facts.h) after it
//   PROGRAM --list --json each case's facts (facts.h), for the harness
//   PROGRAM --image NAME ARGS...  an image a case execs into (SIGWAKE_IMAGE), not a case
#include <cstdio>
#include <cstring>
#include <exception>
#include <vector>

#include "ktap.h"
#include "repro.h"

namespace sigwake {

std::vector<Case>& registered_cases() {
  static std::vector<Case> cases;
  return cases;
}

std::vector<Image>& registered_images() {
  static std::vector<Image> images;
  return images;
}

}  // namespace sigwake

int main(int argc, char** argv) {
  const char* only = nullptr;
  if (argc >= 3 && std::strcmp(argv[1], "--image") == 0) {
    for (const sigwake::Image& image : sigwake::registered_images()) {
      if (std::strcmp(image.name, argv[2]) == 0) return image.run(argc - 3, argv + 3);
    }
    std::fprintf(stderr, "%s: no image named %s\n", argv[0], argv[2]);
    return 2;
  }
  if (argc >= 2 && std::strcmp(argv[1], "--list") == 0) {
    if (argc == 3 && std::strcmp(argv[2], "--json") == 0) {
      std::vector<sigwake::NamedFacts> facts;
      for (const sigwake::Case& c : sigwake::registered_cases()) facts.push_back({c.name, c.facts});
      const std::string text = sigwake::facts_json(facts);
      std::fwrite(text.data(), 1, text.size(), stdout);
      return 0;
    }
    if (argc == 2) {
      for (const sigwake::Case& c : sigwake::registered_cases()) {
        std::printf("%s", c.name);
        for (const std::string_view grant : c.facts->grants) std::printf(" %.*s", static_cast<int>(grant.size()), grant.data());
        std::printf("\n");
      }
      return 0;
    }
  }
  if (argc == 3 && std::strcmp(argv[1], "--case") == 0) {
    only = argv[2];
  } else if (argc != 1) {
    std::fprintf(stderr, "usage: %s [--list [--json] | --case NAME | --image NAME ARGS...]\n", argv[0]);
    return 2;
  }
  std::vector<sigwake::Report> reports;
  for (const sigwake::Case& c : sigwake::registered_cases()) {
    if (only != nullptr && std::strcmp(only, c.name) != 0) continue;
    sigwake::Report& report = reports.emplace_back(c.name);
    try {
      c.run(report);
      if (report.verdict() == sigwake::Verdict::kNone) report.decide(sigwake::Verdict::kError, "no verdict reached");
    } catch (const sigwake::Unsupported& e) {
      report.decide(sigwake::Verdict::kUnsupported, e.what());
    } catch (const sigwake::Misdelivered& e) {
      report.decide(sigwake::Verdict::kMisdelivered, e.what());
    } catch (const std::exception& e) {
      report.decide(sigwake::Verdict::kError, e.what());
    }
  }
  if (only != nullptr && reports.empty()) {
    std::fprintf(stderr, "%s: no case named %s\n", argv[0], only);
    return 2;
  }
  const std::string text = sigwake::ktap_document(reports);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  return sigwake::exit_code(reports);
}
