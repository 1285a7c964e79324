// libbpf's messages (the verifier's log among them), kept for the evidence
// instead of printed or thrown away: a load that fails says why in its result.
#pragma once

#include <cstddef>
#include <string>

namespace sigwake {

// From now on libbpf's messages go to the kept log.
void keep_libbpf_log();

// The last `most` characters of the kept log, on one line.
std::string libbpf_log_tail(std::size_t most);

}  // namespace sigwake
