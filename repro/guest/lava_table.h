// What a LAVA lab is to show for each run, read from the table a LAVA job's initramfs carries
// (harness/sigwake/judge/lava_results.py writes it from the harness's judgement; the guest only looks it
// up). LAVA records results from the console as the job runs, so the guest says them: a known failure of
// this kernel (not-delivered before the fix) is a pass there, not a failure.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace sigwake {

class LavaTable {
 public:
  // The rows of `text` ("<major.minor> <pass> <program.case> <verdict>:<result>...") for a kernel of
  // `release` (uname -r): for each pass and case, the row of the greatest release not above it.
  static LavaTable parse(const std::string& text, const std::string& release);

  bool empty() const { return rows_.empty(); }

  // "pass", "skip" or "fail" for a run of `name` in `pass` that gave `verdict` ("" when it gave none). A
  // case the table does not name is looked up as "*"; a verdict its row does not list fails.
  std::string result(const std::string& pass, const std::string& name, const std::string& verdict) const;

 private:
  struct Row {
    std::pair<int, int> release;
    std::vector<std::string> words;  // "<verdict>:<result>"
  };
  std::map<std::pair<std::string, std::string>, Row> rows_;
};

}  // namespace sigwake
