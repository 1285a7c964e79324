#include "lava_table.h"

#include <cstdio>
#include <sstream>

namespace sigwake {
namespace {

// The leading "major.minor" of a release; a Linux release always starts with one ((0, 0) otherwise: the
// oldest rows, what is known of kernels before every fix).
std::pair<int, int> version_of(const std::string& release) {
  int major = 0;
  int minor = 0;
  if (std::sscanf(release.c_str(), "%d.%d", &major, &minor) != 2) return {0, 0};
  return {major, minor};
}

}  // namespace

LavaTable LavaTable::parse(const std::string& text, const std::string& release) {
  const std::pair<int, int> own = version_of(release);
  LavaTable table;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string from, pass, name;
    if (!(words >> from >> pass >> name)) continue;
    Row row{version_of(from), {}};
    if (row.release > own) continue;
    for (std::string word; words >> word;) row.words.push_back(word);
    auto [at, added] = table.rows_.try_emplace({pass, name}, row);
    if (!added && at->second.release <= row.release) at->second = row;
  }
  return table;
}

std::string LavaTable::result(const std::string& pass, const std::string& name, const std::string& verdict) const {
  auto row = rows_.find({pass, name});
  if (row == rows_.end()) row = rows_.find({pass, "*"});
  if (row == rows_.end() || verdict.empty()) return "fail";
  const std::string prefix = verdict + ":";
  for (const std::string& word : row->second.words) {
    if (word.rfind(prefix, 0) == 0) return word.substr(prefix.size());
  }
  return "fail";
}

}  // namespace sigwake
