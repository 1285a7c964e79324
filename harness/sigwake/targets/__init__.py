"""Where a kernel runs the case loop and what it hands back (a raw capture, read into a kernel's outcome):
QEMU here, this machine's own kernel, a LAVA lab; and where a run's images boot."""
