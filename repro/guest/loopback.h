// The guest's loopback interface, which a kernel brings up down: the socket cases connect over it.
#pragma once

namespace sigwake {

// Sets `lo` up as root; a kernel without CONFIG_INET has none, and then this does nothing: the cases that
// need it find it missing, or down, and say `unsupported`.
void bring_up_loopback();

}  // namespace sigwake
