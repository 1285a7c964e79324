// bpf_kprobe's program: attached to a kprobe perf event with PERF_EVENT_IOC_SET_BPF,
// it counts its runs in the case's own process (the kprobe fires for every task)
// and keeps every sample (returns 1).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

const volatile __u32 target_tgid = 0;
__u64 runs = 0;

SEC("kprobe")
int count_run(void *ctx)
{
	if (bpf_get_current_pid_tgid() >> 32 == target_tgid)
		__sync_fetch_and_add(&runs, 1);
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
