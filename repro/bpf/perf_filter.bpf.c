// bpf_filter_sigio's filter: attached to a sampling event with
// PERF_EVENT_IOC_SET_BPF, it counts every overflow it is shown and rejects it.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

__u64 runs = 0;

SEC("perf_event")
int reject(void *ctx)
{
	__sync_fetch_and_add(&runs, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
