// What a run leaves running after it ends: a daemon (setsid(), its own process group) escapes the group kill and
// could signal the cases after it. The runner is their subreaper (PID 1 in a guest is anyway), so every process
// a run left becomes the runner's child; the sweep kills them all.
#pragma once

#include <sys/types.h>

#include "../lib/deadline.h"

namespace sigwake {

// Whether `pid`, our child, ended before the deadline; reaped if it did (its wait status in `status`).
bool reaped_by(pid_t pid, const Deadline& deadline, int* status = nullptr);

// Kills every child of ours, again for those they leave, and reaps them, until none is left or the deadline
// (one stuck in the kernel past SIGKILL is left; the next sweep finds it again). Returns how many were still
// running: one already dying (a case's child it killed and left unreaped, a zombie) is not counted.
int sweep_strays(const Deadline& deadline);

}  // namespace sigwake
