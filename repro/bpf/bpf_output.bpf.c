// bpf_output_sigio's writer: one record through bpf_perf_event_output() into the
// PERF_COUNT_SW_BPF_OUTPUT event in this CPU's slot. Run with BPF_PROG_TEST_RUN,
// so the reproducer decides when (and on which CPU) it writes.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} events SEC(".maps");

const volatile __u64 marker = 0;  // set before load; the record carries it back

SEC("raw_tp")
int emit(void *ctx)
{
	__u64 value = marker;

	return bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU, &value, sizeof(value));
}

char LICENSE[] SEC("license") = "GPL";
