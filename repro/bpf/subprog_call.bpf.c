// bpf_ksymbol_subprog_name's program: a raw_tp program whose work is a bpf-to-bpf
// call, so a JIT compiles it as two functions, each told to ksymbol events in a
// PERF_RECORD_KSYMBOL of its own and named after its own function
// (bpf_prog_<tag>_<function>, from the program's BTF). Loaded, never attached.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

static __noinline int the_subprog(int value)
{
	return value ^ 0x5a;
}

SEC("raw_tp")
int calls_subprog(void *ctx)
{
	return the_subprog(bpf_get_smp_processor_id()) & 1;
}

char LICENSE[] SEC("license") = "GPL";
