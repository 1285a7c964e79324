/* A small stand-in for the signal path, for the mutation operators' tests: the
 * shapes the kernel's functions have, in functions named as the path's are. */
#define POLL_IN 1
#define POLL_HUP 6
#define POLL_OUT 2
#define PIDTYPE_PID 0
#define PIDTYPE_TGID 1
#define PIDTYPE_PGID 2

struct event {
	struct event *parent;
	int pending_kill;
	int limit;
	int wakeup;
};

static void kill_fasync(struct event *event, int band) { (void)event; (void)band; }
static void irq_work_queue(struct event *event) { (void)event; }

void perf_output_wakeup(struct event *event, unsigned long head, unsigned long watermark)
{
	event->pending_kill = POLL_IN;
	if (head >= watermark && event->limit != 0)
		irq_work_queue(event->parent);
}

void send_sigio(struct event *event, int type)
{
	if (type == PIDTYPE_TGID || event->wakeup > 2)
		kill_fasync(event, POLL_HUP);
}

/* Not on the path: never mutated. */
int elsewhere(int n)
{
	if (n == 2)
		return 1;
	return 0;
}
