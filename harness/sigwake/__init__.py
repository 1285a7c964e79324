"""sigwake: boot kernels under QEMU and record whether perf ring-buffer wakeups raise SIGIO."""
