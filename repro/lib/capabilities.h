// The calling thread's effective capabilities, read and dropped with capget/capset
// (no libcap in a static initramfs program).
#pragma once

namespace sigwake {

// Whether capability `cap` (CAP_PERFMON, ...) is in our effective set.
bool has_effective(int cap);

// Removes `cap` from our effective set; it stays permitted (nothing here needs it back).
void drop_effective(int cap);

}  // namespace sigwake
