/*
 * p2plimit - the plain-C limit of the point-to-point rows (p2prows.h): the
 * least a runtime could do to move the same messages between pairs of
 * processes over shared memory, with no runtime, no matching, no argument
 * checks and no error paths.
 *
 *   p2plimit -n N [--quick] [--list] all | NAME...
 *
 * N processes (fork) share one MAP_SHARED|MAP_ANONYMOUS area and pair as
 * (r, r^1), as the ranks of rmabench's rows do; a process without a partner
 * idles. With N no larger than the CPUs this process may use, each is
 * pinned to one of them and waits by spinning, as ranks under --bind-to
 * core; with more, none is pinned and a wait yields the CPU after 20 polls,
 * as shmrun's oversubscribed policy does.
 *
 * Each process owns a ring of P2P_WINDOW_LEN slots that only it writes and
 * only its partner reads, and an ack word on a line of its own. A message
 * is a flag and a copy:
 *   - below LARGE (64 KiB) the sender copies the message into its next slot
 *     (a header line with the sequence word, the length and an address, then
 *     the payload) and stores the slot's sequence word (release); the
 *     receiver waits for it (acquire) and copies the payload out: two
 *     memcpys, the least a message from one private buffer into another can
 *     cost through shared memory;
 *   - from LARGE on the slot carries only the address and length of the
 *     sender's private buffer, and the receiver copies it straight into its
 *     own with process_vm_readv: one copy, the least a message between
 *     private buffers can cost without a kernel module (shmrun and Open
 *     MPI's CMA path do the same). Where the kernel forbids the read, the
 *     send buffers live in the shared area instead and the receiver
 *     memcpys from them (still one copy; "INFO single_copy" says which).
 * A ping-pong needs nothing else (the reply says the request was read); a
 * window ends with the receiver storing its ack word after it has copied
 * every message, and the sender waits for it before it reuses its slots.
 * The limit does no matching, keeps no queues and never looks at a tag.
 *
 * Same timing plan, statistics and RESULT lines as rmabench (benchutil.h);
 * every row is timed from the first process's start to the last one's end
 * and reported per message; answers are checked the same way (stamps on
 * every message, then one operation with full patterns into poisoned
 * buffers; "INFO check NAME ok|WRONG").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchutil.h"
#include "forkwatch.h"
#include "p2prows.h"

#define CL 64
#define MAXN 256
#define LARGE ((size_t)65536) /* from here a message moves by single copy */

/* Control state, one line a word: the control barrier, the calibration
 * verdict and each process's timings of the last batch. */
struct control {
	_Alignas(128) int64_t cb_count;
	int64_t cb_sense;
	_Alignas(128) int64_t next, nbatch;
	_Alignas(128) int64_t t0[MAXN], t1[MAXN], wrong[MAXN];
	int64_t pid[MAXN];
	int64_t single_failed; /* a probe read failed: send buffers in the area */
};

/* A slot's header, on the line its payload (if any) starts on. */
struct slot {
	uint64_t seq;  /* the message's count from this sender, from 1 */
	uint64_t len;  /* bytes */
	uint64_t addr; /* large: the sender's buffer */
	char payload[];
};
#define SLOT_HDR (sizeof(struct slot))

static struct control *ctl;
static char *area;      /* n regions: an ack line, then the slots */
static size_t region;   /* bytes per process in area */
static char *sendarea;  /* n send buffers, used when single copy is off */
static size_t sendcap;  /* bytes per process in sendarea */
static int n, me, oversub, single;
static int cb_local;
static char *sbuf, *rbuf; /* this process's send and receive buffers */
static uint64_t tx, rx;   /* messages sent to and received from the partner */
static uint64_t win;      /* windows acknowledged */

static inline void relax(int *polls)
{
	if (oversub && ++*polls > 20) {
		sched_yield();
		*polls = 0;
	}
}

static void cbar(void)
{
	int64_t mine;
	int polls = 0;
	cb_local = !cb_local;
	mine = cb_local;
	if (__atomic_add_fetch(&ctl->cb_count, 1, __ATOMIC_ACQ_REL) == n) {
		__atomic_store_n(&ctl->cb_count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&ctl->cb_sense, mine, __ATOMIC_RELEASE);
	} else {
		while (__atomic_load_n(&ctl->cb_sense, __ATOMIC_ACQUIRE) != mine)
			relax(&polls);
	}
}

static inline void await(const uint64_t *p, uint64_t v)
{
	int polls = 0;
	while (__atomic_load_n(p, __ATOMIC_ACQUIRE) != v)
		relax(&polls);
}

static inline uint64_t *ack(int q)
{
	return (uint64_t *)(area + (size_t)q * region);
}

static inline struct slot *slot(int q, size_t stride, int j)
{
	return (struct slot *)(area + (size_t)q * region + CL + (size_t)j * stride);
}

/* Slot bytes for messages of len bytes: a header line, and the payload
 * below LARGE. */
static inline size_t slot_stride(size_t len)
{
	size_t b = SLOT_HDR + (len < LARGE ? len : 0);
	return (b + CL - 1) / CL * CL;
}

static void read_remote(int q, void *dst, uint64_t src, size_t len)
{
	while (len > 0) {
		struct iovec l = {dst, len}, r = {(void *)(uintptr_t)src, len};
		ssize_t got = process_vm_readv((pid_t)ctl->pid[q], &l, 1, &r, 1, 0);
		if (got <= 0) {
			if (got < 0 && errno == EINTR)
				continue;
			perror("p2plimit: process_vm_readv");
			exit(1);
		}
		dst = (char *)dst + got;
		src += (uint64_t)got;
		len -= (size_t)got;
	}
}

/* Send buf (len bytes) through slot j of this process's ring. */
static inline void send_msg(const char *buf, size_t len, size_t stride, int j)
{
	struct slot *s = slot(me, stride, j);
	s->len = len;
	if (len < LARGE)
		memcpy(s->payload, buf, len);
	else
		s->addr = (uint64_t)(uintptr_t)buf;
	__atomic_store_n(&s->seq, ++tx, __ATOMIC_RELEASE);
}

/* Receive the partner q's next message, from its slot j, into buf (cap
 * bytes); returns the message's length. */
static inline size_t recv_msg(int q, char *buf, size_t cap, size_t stride, int j)
{
	struct slot *s = slot(q, stride, j);
	size_t len;
	await(&s->seq, ++rx);
	len = s->len < cap ? s->len : cap;
	if (s->len < LARGE)
		memcpy(buf, s->payload, len);
	else if (single)
		read_remote(q, buf, s->addr, len);
	else
		memcpy(buf, (const void *)(uintptr_t)s->addr, len);
	return s->len;
}

static long wrong_here; /* this process's wrong answers in this row */

static inline void check(const struct p2p_row *row, const char *buf, uint64_t v)
{
	if (!p2p_stamp_ok(buf, row->bytes, v))
		p2p_stamp_wrong(row->name, me, &wrong_here, buf, row->bytes, v);
}

/* One operation of row: a round trip or a window. full: with full patterns
 * into poisoned buffers, every byte and length checked (the checked
 * operation after the timed ones); else with stamps. */
static void p2p_op(const struct p2p_row *row, int64_t seq, int full)
{
	int q = me ^ 1, pair = me / 2, odd = me & 1, nslot = p2p_slots(row);
	size_t len = row->bytes, st = p2p_stride(row), stride = slot_stride(len);
	if (q >= n)
		return;
	if (row->method == P2P_PINGPONG) {
		size_t got;
		if (full) {
			p2p_fill(sbuf, len, pair, 0, odd);
			p2p_poison(rbuf, len, pair, 0, !odd);
		} else if (!odd) {
			p2p_put_stamp(sbuf, len, p2p_stamp(seq, pair, 0, 0));
		}
		if (!odd) {
			send_msg(sbuf, len, stride, 0);
			got = recv_msg(q, rbuf, len, stride, 0);
		} else {
			got = recv_msg(q, rbuf, len, stride, 0);
			if (!full) {
				check(row, rbuf, p2p_stamp(seq, pair, 0, 0));
				p2p_put_stamp(sbuf, len, p2p_stamp(seq, pair, 0, 1));
			}
			send_msg(sbuf, len, stride, 0);
		}
		if (full) {
			wrong_here += p2p_verify(row->name, me, rbuf, len, pair, 0, !odd);
			if (got != len) {
				printf("INFO check %s WRONG on rank %d: received %zu bytes, want %zu\n",
				       row->name, me, got, len);
				wrong_here++;
			}
		} else if (!odd) {
			check(row, rbuf, p2p_stamp(seq, pair, 0, 1));
		}
		return;
	}
	if (!odd) {
		for (int j = 0; j < nslot; j++) {
			if (full)
				p2p_fill(sbuf + (size_t)j * st, len, pair, j, 0);
			else
				p2p_put_stamp(sbuf + (size_t)j * st, len, p2p_stamp(seq, pair, j, 0));
		}
		for (int j = 0; j < P2P_WINDOW_LEN; j++)
			send_msg(sbuf + (size_t)(j % nslot) * st, len, stride, j);
		await(ack(q), ++win);
		return;
	}
	if (full)
		for (int j = 0; j < nslot; j++)
			p2p_poison(rbuf + (size_t)j * st, len, pair, j, 0);
	for (int j = 0; j < P2P_WINDOW_LEN; j++) {
		size_t got = recv_msg(q, rbuf + (size_t)(j % nslot) * st, len, stride, j);
		if (full && got != len) {
			printf("INFO check %s WRONG on rank %d: received %zu bytes, want %zu\n", row->name,
			       me, got, len);
			wrong_here++;
		}
	}
	for (int j = 0; j < nslot; j++) {
		if (full)
			wrong_here += p2p_verify(row->name, me, rbuf + (size_t)j * st, len, pair, j, 0);
		else
			check(row, rbuf + (size_t)j * st, p2p_stamp(seq, pair, j, 0));
	}
	__atomic_store_n(ack(me), ++win, __ATOMIC_RELEASE);
}

/* ---- timing ---------------------------------------------------------------- */

static int64_t pseq; /* operations so far, in step in a pair */

/* One batch of k operations; process 0 returns first start to last end. */
static int64_t timed_batch(const struct p2p_row *row, int64_t k)
{
	int64_t t0, t1;
	cbar();
	t0 = now_ns();
	for (int64_t i = 0; i < k; i++)
		p2p_op(row, ++pseq, 0);
	t1 = now_ns();
	ctl->t0[me] = t0;
	ctl->t1[me] = t1;
	cbar();
	if (me != 0)
		return 0;
	for (int q = 1; q < n; q++) {
		if (ctl->t0[q] < t0)
			t0 = ctl->t0[q];
		if (ctl->t1[q] > t1)
			t1 = ctl->t1[q];
	}
	return t1 - t0;
}

static void run(const struct p2p_row *row, const struct plan *plan)
{
	struct plan p = *plan;
	int64_t k = 1, t = 0, per = p2p_per_op(row);
	int nv;
	double *v;

	/* A fresh ring: no sequence word of another row's layout is left. */
	memset(area + (size_t)me * region, 0, region);
	tx = rx = win = 0;
	wrong_here = 0;
	cbar();
	timed_batch(row, 1);
	for (;;) {
		int64_t t2;
		t = timed_batch(row, k);
		t2 = timed_batch(row, k);
		if (t2 < t)
			t = t2;
		if (me == 0) {
			ctl->next = t < p.batch_ns ? plan_grow(k, t, p.batch_ns) : 0;
			ctl->nbatch = plan_batches(&p, k, t);
		}
		cbar();
		if (!ctl->next)
			break;
		k = ctl->next;
		cbar(); /* process 0 writes next again only after everyone read it */
	}
	p.batches = (int)ctl->nbatch;
	nv = p.rounds * p.batches;
	v = malloc(sizeof(double) * (size_t)nv);
	if (!v) {
		perror("malloc");
		exit(1);
	}
	for (int i = 0; i < nv; i++)
		v[i] = (double)timed_batch(row, k) / (double)k / (double)per;
	cbar();
	p2p_op(row, ++pseq, 1);
	ctl->wrong[me] = wrong_here;
	fflush(stdout);
	cbar();
	if (me == 0) {
		long wrong = 0;
		for (int q = 0; q < n; q++)
			wrong += ctl->wrong[q];
		report(row->name, &p, v, k * per);
		printf("INFO check %s %s\n", row->name, wrong ? "WRONG" : "ok");
		fflush(stdout);
	}
	cbar();
	free(v);
}

static int pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof set, &set);
}

static const char *row_name(int j) { return p2p_rows[j].name; }

int main(int argc, char **argv)
{
	struct bench_args args = {0};
	const struct plan *p = &plan_full;
	int quick = 0, list = 0, all = 0, nsel = 0, ncpu = 0, failed = 0;
	int sel[NP2P] = {0}, cpus[MAXN];
	cpu_set_t allowed;
	pid_t kids[MAXN];
	size_t cap = 64, large = 0;

	args.n = 2;
	if (bench_parse(argc, argv, "p2plimit", row_name, NP2P, sel, 2, MAXN, 1, &args))
		return 2;
	n = args.n;
	quick = args.quick, list = args.list, all = args.all;
	if (list) {
		for (int j = 0; j < NP2P; j++)
			printf("%s\n", p2p_rows[j].name);
		return 0;
	}
	if (quick)
		p = &plan_quick;
	region = CL;
	for (int j = 0; j < NP2P; j++) {
		const struct p2p_row *row = &p2p_rows[j];
		size_t ring = CL + (row->method != P2P_PINGPONG ? P2P_WINDOW_LEN : 1) *
					   slot_stride(row->bytes);
		if (all)
			sel[j] = 1;
		if (!sel[j])
			continue;
		nsel++;
		if (ring > region)
			region = ring;
		if (p2p_stride(row) * (size_t)p2p_slots(row) > cap)
			cap = p2p_stride(row) * (size_t)p2p_slots(row);
		if (row->bytes >= LARGE && row->bytes > large)
			large = row->bytes;
	}
	if (!nsel) {
		fprintf(stderr, "usage: p2plimit -n N [--quick] [--list] all | NAME...\n");
		return 2;
	}
	region = (region + 4095) / 4096 * 4096;
	if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
		for (int c = 0; c < CPU_SETSIZE && ncpu < MAXN; c++)
			if (CPU_ISSET(c, &allowed))
				cpus[ncpu++] = c;
	oversub = n > ncpu;

	ctl = mmap(NULL, sizeof *ctl, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	area = mmap(NULL, (size_t)n * region, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		    -1, 0);
	/* The send buffers for when single copy is off: mapped for every
	 * process, touched only if used. */
	sendcap = large ? ((large > cap ? large : cap) + 4095) / 4096 * 4096 : 0;
	sendarea = sendcap ? mmap(NULL, (size_t)n * sendcap, PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
			   : NULL;
	if (ctl == MAP_FAILED || area == MAP_FAILED || sendarea == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(ctl, 0, sizeof *ctl);
	memset(area, 0, (size_t)n * region);

	printf("INFO ranks %d %s\n", n, oversub ? "unpinned, spin then yield" : "pinned, spin");
	printf("INFO mode %s rounds %d batches %d batch_ns %lld\n", quick ? "quick" : "full",
	       p->rounds, p->batches, (long long)p->batch_ns);
	fflush(stdout); /* nothing buffered may be printed twice after fork */

	me = 0;
	pid_t parent = getpid();
	fork_watch_parent();
	for (int q = 1; q < n; q++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			fork_watch_child(parent);
			me = q;
			break;
		}
		kids[q] = pid;
	}
	if (!oversub && pin(cpus[me]) != 0)
		fprintf(stderr, "p2plimit: pinning to cpu %d: %s\n", cpus[me], strerror(errno));
	/* Let the partner read this process's memory under Yama's
	 * ptrace_scope 1, as shmrun and Open MPI do. */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	sbuf = malloc(cap);
	rbuf = malloc(cap);
	if (!sbuf || !rbuf) {
		perror("malloc");
		return 1;
	}
	bench_prefault(sbuf, cap);
	bench_prefault(rbuf, cap);

	/* Single copy if every process can read its partner's memory. */
	ctl->pid[me] = getpid();
	cbar();
	if ((me ^ 1) < n) {
		char probe[8];
		struct iovec l = {probe, sizeof probe}, r = {sbuf, sizeof probe};
		if (process_vm_readv((pid_t)ctl->pid[me ^ 1], &l, 1, &r, 1, 0) != sizeof probe)
			__atomic_store_n(&ctl->single_failed, 1, __ATOMIC_RELAXED);
	}
	cbar();
	single = !ctl->single_failed;
	if (!single && sendcap) {
		/* Send from the shared area: the partner copies from there. */
		free(sbuf);
		sbuf = sendarea + (size_t)me * sendcap;
		memset(sbuf, 0, sendcap);
	}
	if (me == 0) {
		printf("INFO single_copy %s\n",
		       single ? "process_vm_readv" : "off (memcpy from shared send buffers)");
		fflush(stdout);
	}

	for (int j = 0; j < NP2P; j++)
		if (sel[j])
			run(&p2p_rows[j], p);

	if (me != 0)
		_exit(0);
	for (int q = 1; q < n; q++) {
		int status = 0;
		if (waitpid(kids[q], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			failed = 1;
	}
	if (failed) {
		fprintf(stderr, "p2plimit: a process failed\n");
		return 1;
	}
	return 0;
}
