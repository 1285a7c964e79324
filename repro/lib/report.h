// One reproducer's outcome: a verdict from the shared vocabulary and its evidence.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol.h"

namespace sigwake {

// Verdict, its words and its KTAP and exit-code rules come from repro/protocol.json
// (the generated protocol.h), shared with harness/sigwake/verdicts.py.
std::string_view verdict_name(Verdict verdict);

// kselftest exit codes: 0 pass, 1 fail, 4 skip.
int exit_code(Verdict verdict);

// Its rule in the protocol (kNone has error's).
const protocol::VerdictRule& rule(Verdict verdict);

class Report;
// A program's code over all its cases: 1 if any failed or erred, 4 if all were skipped, else 0.
int exit_code(const std::vector<Report>& reports);

class Report {
 public:
  explicit Report(std::string name) : name_(std::move(name)) {}

  // Evidence, in the order added; values are printed as one line each.
  void add(std::string key, std::string value);
  void add(std::string key, long long value) { add(std::move(key), std::to_string(value)); }
  void add(std::string key, bool value) { add(std::move(key), std::string(value ? "1" : "0")); }
  void add(std::string key, const char* value) { add(std::move(key), std::string(value)); }

  void decide(Verdict verdict, std::string reason = {});

  const std::string& name() const { return name_; }
  Verdict verdict() const { return verdict_; }
  const std::string& reason() const { return reason_; }
  const std::vector<std::pair<std::string, std::string>>& evidence() const { return evidence_; }

 private:
  std::string name_;
  Verdict verdict_ = Verdict::kNone;
  std::string reason_;
  std::vector<std::pair<std::string, std::string>> evidence_;
};

}  // namespace sigwake
