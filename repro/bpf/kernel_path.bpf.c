// Kernel-path evidence: counts, for the perf events of one process, the calls
// on the chain from a record to a signal:
//   perf_output_wakeup -> (irq_work) perf_pending_irq / perf_pending_event
//   -> perf_event_wakeup -> kill_fasync -> send_sigio
// An event counts when its owner (for an inherited event, its parent's owner)
// belongs to target_tgid. kill_fasync and send_sigio count only while this CPU
// is inside perf_event_wakeup() of such an event: that is where perf sends.
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "kernel_path.h"

// The few kernel fields we read, relocated against the running kernel's BTF.
struct task_struct {
	int tgid;
} __attribute__((preserve_access_index));

struct perf_event {
	struct perf_event *parent;
	struct task_struct *owner;
} __attribute__((preserve_access_index));

struct perf_output_handle {
	struct perf_event *event;
} __attribute__((preserve_access_index));

// Older kernels name the irq_work `pending`, 6.1 on `pending_irq`. The field
// types must be structs for CO-RE to match them; the members do not matter.
struct irq_work {
	int unused;
} __attribute__((preserve_access_index));

struct perf_event___pending_irq {
	struct irq_work pending_irq;
} __attribute__((preserve_access_index));

struct perf_event___pending {
	struct irq_work pending;
} __attribute__((preserve_access_index));

__u32 target_tgid = 0;  // set by user space before each run, with calls[] zeroed

__u64 calls[KERNEL_PATH_FUNCTIONS];

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} inside_wakeup SEC(".maps");

static __always_inline int ours(struct perf_event *event)
{
	struct perf_event *parent = BPF_CORE_READ(event, parent);

	if (parent)
		event = parent;
	return event && BPF_CORE_READ(event, owner, tgid) == target_tgid;
}

static __always_inline void count(int function)
{
	__sync_fetch_and_add(&calls[function], 1);
}

static __always_inline __u32 *inside(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&inside_wakeup, &zero);
}

SEC("kprobe/perf_output_wakeup")
int BPF_KPROBE(output_wakeup, struct perf_output_handle *handle)
{
	if (ours(BPF_CORE_READ(handle, event)))
		count(KP_PERF_OUTPUT_WAKEUP);
	return 0;
}

static __always_inline int pending(void *work)
{
	unsigned long offset;

	if (bpf_core_field_exists(struct perf_event___pending_irq, pending_irq))
		offset = bpf_core_field_offset(struct perf_event___pending_irq, pending_irq);
	else
		offset = bpf_core_field_offset(struct perf_event___pending, pending);
	if (ours((struct perf_event *)((char *)work - offset)))
		count(KP_PERF_PENDING);
	return 0;
}

SEC("kprobe/perf_pending_irq")
int BPF_KPROBE(pending_irq, void *work)
{
	return pending(work);
}

SEC("kprobe/perf_pending_event")
int BPF_KPROBE(pending_event, void *work)
{
	return pending(work);
}

SEC("kprobe/perf_event_wakeup")
int BPF_KPROBE(event_wakeup, struct perf_event *event)
{
	__u32 *flag = inside();

	if (flag && ours(event)) {
		count(KP_PERF_EVENT_WAKEUP);
		*flag = 1;
	}
	return 0;
}

SEC("kretprobe/perf_event_wakeup")
int BPF_KRETPROBE(event_wakeup_done)
{
	__u32 *flag = inside();

	if (flag)
		*flag = 0;
	return 0;
}

SEC("kprobe/kill_fasync")
int BPF_KPROBE(kill_fasync)
{
	__u32 *flag = inside();

	if (flag && *flag)
		count(KP_KILL_FASYNC);
	return 0;
}

SEC("kprobe/send_sigio")
int BPF_KPROBE(send_sigio)
{
	__u32 *flag = inside();

	if (flag && *flag)
		count(KP_SEND_SIGIO);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
