/* The functions kernel_path.bpf.c counts, shared with repro/lib/kernel_path.cc. */
#ifndef SIGWAKE_KERNEL_PATH_H
#define SIGWAKE_KERNEL_PATH_H

enum kernel_path_function {
	KP_PERF_OUTPUT_WAKEUP,
	KP_PERF_PENDING,
	KP_PERF_EVENT_WAKEUP,
	KP_KILL_FASYNC,
	KP_SEND_SIGIO,
	KERNEL_PATH_FUNCTIONS,
};

#endif
