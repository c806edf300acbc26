/* shmcc --check: what orders a C program's OpenMP threads, told to the
 * checker.
 *
 * Under --check each thread has a clock of its own (rmacheck.Threads), so
 * the checker must see what orders threads: a program linked by shmcc
 * --check calls these __wrap_ functions (ld --wrap) in place of libgomp's
 * entry points; each tells the checker (shmChkOmp: release into, acquire
 * from, or drop a synchronization object of this process) and calls
 * libgomp's own. Objects are keyed by an address: a parallel region's
 * fork, join, barrier, ordered and tasks live in the wrapper's frame while
 * the region runs; a critical section, a lock, a named critical are their
 * own addresses; a task's creation has a number above any address.
 *
 * What each construct orders (as the OpenMP standard does; more order is
 * safe, a race can hide behind it, none is invented):
 *   parallel: the encountering thread's past before every member's start
 *             (fork); every member's end before what follows (join), and
 *             the region's tasks.
 *   barrier (and the ends of for, sections, single without nowait): every
 *             member's past before every member's future, and the team's
 *             finished tasks.
 *   critical, atomic, ordered, omp_set_lock/omp_unset_lock: release at the
 *             exit, acquire at the entry.
 *   sections: each section runs as a thread of its own (below); their
 *             ends before the barrier's, the region's end.
 *   task:     the creator's past before the task; a finished task before a
 *             taskwait, a taskgroup's end, a barrier, and before every task
 *             that starts after it (every finished task of the team: more
 *             than the children and the dependences, never less).
 * A task with a copy function (C++ firstprivate objects) runs unwrapped:
 * its start is not ordered after its creation, so what it and its creator
 * did before may be reported when another thread runs it.
 *
 * Off (no shmrun --check), each wrapper calls libgomp's at once. */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi.h"
#include "_cgo_export.h"

#define TLS __thread __attribute__((tls_model("initial-exec")))

enum { REL = 0, ACQ = 1, DROP = 2 };

typedef void (*omp_fn)(void *);

/* A parallel region's team: the wrapper's frame while the region runs. */
typedef struct team {
	omp_fn fn;
	void *data;
	/* The objects: their addresses are their keys. */
	char fork, join, barrier, tasks, ordered, sections;
} team;

static TLS team *cur_team; /* the innermost region this thread is a member of */
static char no_team_barrier, no_team_tasks, no_team_ordered, no_team_sections, critical_unnamed, atomic_global;
static uintptr_t new_keys; /* keys of objects that are no address */

uintptr_t shmrun_chk_new_key(void) { return (uintptr_t)1 << 63 | __atomic_add_fetch(&new_keys, 1, __ATOMIC_RELAXED); }

static inline int on(void) { return __atomic_load_n(&shmrun_chk_omp_on, __ATOMIC_RELAXED); }
static inline void sync_obj(int op, const volatile void *key) { shmChkOmp(op, (uintptr_t)key); }

void *shmrun_chk_real(const char *name)
{
	void *f = dlsym(RTLD_DEFAULT, name);
	if (!f && (strncmp(name, "GOMP_", 5) == 0 || strncmp(name, "omp_", 4) == 0)) {
		/* Every call of the program's to libgomp wrapped, the linker
		 * (--as-needed) left libgomp out: load it. */
		void *lib = dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL);
		if (lib)
			f = dlsym(lib, name);
	}
	if (!f) {
		fprintf(stderr, "shmrun --check: %s: libgomp's %s is not found: %s\n", __func__, name, dlerror());
		abort();
	}
	return f;
}

/* REAL(name, type) declares real, libgomp's name. */
#define REAL(name, type)                                                                      \
	static __typeof__(type) real;                                                                   \
	if (!__atomic_load_n(&real, __ATOMIC_ACQUIRE))                                        \
		__atomic_store_n(&real, (type)shmrun_chk_real(#name), __ATOMIC_RELEASE)

/* The section this thread runs as (omp.c's sections, below): its number,
 * and the thread's own to return to; -1: none. */
static TLS int sec_slot = -1, own_slot;

static void team_body(void *p)
{
	team *t = p;
	team *up = cur_team;
	/* A member of a region inside a section starts outside any section of
	 * the new team; the outer section resumes after. */
	int sec = sec_slot, own = own_slot;
	sec_slot = -1;
	cur_team = t;
	sync_obj(ACQ, &t->fork);
	t->fn(t->data);
	sync_obj(REL, &t->join);
	cur_team = up;
	sec_slot = sec;
	own_slot = own;
}

static void team_begin(team *t, omp_fn fn, void *data)
{
	memset(t, 0, sizeof *t);
	t->fn = fn;
	t->data = data;
	sync_obj(REL, &t->fork);
}

static void team_end(team *t)
{
	sync_obj(ACQ, &t->join);
	sync_obj(ACQ, &t->tasks);
	sync_obj(ACQ, &t->sections);
	const void *keys[] = {&t->fork, &t->join, &t->barrier, &t->tasks, &t->ordered, &t->sections};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		sync_obj(DROP, keys[i]);
}

void __wrap_GOMP_parallel(omp_fn fn, void *data, unsigned num_threads, unsigned flags)
{
	REAL(GOMP_parallel, void (*)(omp_fn, void *, unsigned, unsigned));
	if (!on()) {
		real(fn, data, num_threads, flags);
		return;
	}
	team t;
	team_begin(&t, fn, data);
	real(team_body, &t, num_threads, flags);
	team_end(&t);
}

void __wrap_GOMP_parallel_sections(omp_fn fn, void *data, unsigned num_threads, unsigned count, unsigned flags)
{
	REAL(GOMP_parallel_sections, void (*)(omp_fn, void *, unsigned, unsigned, unsigned));
	if (!on()) {
		real(fn, data, num_threads, count, flags);
		return;
	}
	team t;
	team_begin(&t, fn, data);
	real(team_body, &t, num_threads, count, flags);
	team_end(&t);
}

/* The combined parallel loops with a chunk size, and without. */
#define PARALLEL_LOOP(name)                                                                                      \
	void __wrap_##name(omp_fn fn, void *data, unsigned num_threads, long start, long end, long incr,          \
			   long chunk, unsigned flags)                                                           \
	{                                                                                                        \
		REAL(name, void (*)(omp_fn, void *, unsigned, long, long, long, long, unsigned));                \
		if (!on()) {                                                                                     \
			real(fn, data, num_threads, start, end, incr, chunk, flags);                             \
			return;                                                                                  \
		}                                                                                                \
		team t;                                                                                          \
		team_begin(&t, fn, data);                                                                        \
		real(team_body, &t, num_threads, start, end, incr, chunk, flags);                                \
		team_end(&t);                                                                                    \
	}
#define PARALLEL_LOOP_RUNTIME(name)                                                                              \
	void __wrap_##name(omp_fn fn, void *data, unsigned num_threads, long start, long end, long incr,          \
			   unsigned flags)                                                                       \
	{                                                                                                        \
		REAL(name, void (*)(omp_fn, void *, unsigned, long, long, long, unsigned));                      \
		if (!on()) {                                                                                     \
			real(fn, data, num_threads, start, end, incr, flags);                                    \
			return;                                                                                  \
		}                                                                                                \
		team t;                                                                                          \
		team_begin(&t, fn, data);                                                                        \
		real(team_body, &t, num_threads, start, end, incr, flags);                                       \
		team_end(&t);                                                                                    \
	}
PARALLEL_LOOP(GOMP_parallel_loop_static)
PARALLEL_LOOP(GOMP_parallel_loop_dynamic)
PARALLEL_LOOP(GOMP_parallel_loop_guided)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_guided)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_runtime)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

static void barrier_in(void)
{
	team *t = cur_team;
	sync_obj(REL, t ? &t->barrier : &no_team_barrier);
}

static void barrier_out(void)
{
	team *t = cur_team;
	sync_obj(ACQ, t ? &t->barrier : &no_team_barrier);
	sync_obj(ACQ, t ? &t->tasks : &no_team_tasks);
	sync_obj(ACQ, t ? &t->sections : &no_team_sections);
}

/* A section runs as a thread of its own (a clock entry never used
 * before, forked from the thread that runs it): which thread libgomp
 * gives a section to is the schedule's choice, and two sections on one
 * thread are still unordered to OpenMP. Its end releases into the team's
 * sections object, which a barrier, the region's end and sections_end
 * acquire. Once the rank's entries are used up (rmacheck.Threads, the
 * threads' first), a section runs as its thread: two sections that one
 * thread runs are then ordered in that run. */
static void section_end(void)
{
	if (sec_slot < 0)
		return;
	team *t = cur_team;
	sync_obj(REL, t ? &t->sections : &no_team_sections);
	shmrun_chk_set_thread(own_slot);
	sec_slot = -1;
}

static void section_begin(void)
{
	int s = shmrun_chk_take_slot();
	if (s < 0)
		return;
	const void *k = (const void *)shmrun_chk_new_key();
	sync_obj(REL, k);
	own_slot = shmrun_chk_thread();
	shmrun_chk_set_thread(s);
	sec_slot = s;
	sync_obj(ACQ, k);
	sync_obj(DROP, k);
}

static unsigned section_next(unsigned id)
{
	section_end();
	if (id != 0)
		section_begin();
	return id;
}

unsigned __wrap_GOMP_sections_start(unsigned count)
{
	REAL(GOMP_sections_start, unsigned (*)(unsigned));
	unsigned id = real(count);
	return on() ? section_next(id) : id;
}

unsigned __wrap_GOMP_sections_next(void)
{
	REAL(GOMP_sections_next, unsigned (*)(void));
	unsigned id = real();
	return on() ? section_next(id) : id;
}

void __wrap_GOMP_sections_end_nowait(void)
{
	REAL(GOMP_sections_end_nowait, void (*)(void));
	if (on())
		section_end();
	real();
}

/* The barriers: GOMP_barrier, and the ends of for and sections. */
#define BARRIER(name)                                                                                            \
	void __wrap_##name(void)                                                                                 \
	{                                                                                                        \
		REAL(name, void (*)(void));                                                                      \
		if (!on()) {                                                                                     \
			real();                                                                                  \
			return;                                                                                  \
		}                                                                                                \
		section_end();                                                                                   \
		barrier_in();                                                                                    \
		real();                                                                                          \
		barrier_out();                                                                                   \
	}
#define BARRIER_CANCEL(name)                                                                                     \
	bool __wrap_##name(void)                                                                                 \
	{                                                                                                        \
		REAL(name, bool (*)(void));                                                                      \
		if (!on())                                                                                       \
			return real();                                                                           \
		section_end();                                                                                   \
		barrier_in();                                                                                    \
		bool r = real();                                                                                 \
		barrier_out();                                                                                   \
		return r;                                                                                        \
	}
BARRIER(GOMP_barrier)
BARRIER(GOMP_loop_end)
BARRIER(GOMP_sections_end)
BARRIER_CANCEL(GOMP_barrier_cancel)
BARRIER_CANCEL(GOMP_loop_end_cancel)
BARRIER_CANCEL(GOMP_sections_end_cancel)

/* Mutual exclusion: acquire at the entry, release at the exit. */
#define ENTRY(name, key)                                                                                         \
	void __wrap_##name(void)                                                                                 \
	{                                                                                                        \
		REAL(name, void (*)(void));                                                                      \
		real();                                                                                          \
		if (on())                                                                                        \
			sync_obj(ACQ, key);                                                                      \
	}
#define EXIT(name, key)                                                                                          \
	void __wrap_##name(void)                                                                                 \
	{                                                                                                        \
		REAL(name, void (*)(void));                                                                      \
		if (on())                                                                                        \
			sync_obj(REL, key);                                                                      \
		real();                                                                                          \
	}
ENTRY(GOMP_critical_start, &critical_unnamed)
EXIT(GOMP_critical_end, &critical_unnamed)
ENTRY(GOMP_atomic_start, &atomic_global)
EXIT(GOMP_atomic_end, &atomic_global)
ENTRY(GOMP_ordered_start, cur_team ? &cur_team->ordered : &no_team_ordered)
EXIT(GOMP_ordered_end, cur_team ? &cur_team->ordered : &no_team_ordered)

#define ENTRY_PTR(name)                                                                                          \
	void __wrap_##name(void *p)                                                                              \
	{                                                                                                        \
		REAL(name, void (*)(void *));                                                                    \
		real(p);                                                                                         \
		if (on())                                                                                        \
			sync_obj(ACQ, p);                                                                        \
	}
#define EXIT_PTR(name)                                                                                           \
	void __wrap_##name(void *p)                                                                              \
	{                                                                                                        \
		REAL(name, void (*)(void *));                                                                    \
		if (on())                                                                                        \
			sync_obj(REL, p);                                                                        \
		real(p);                                                                                         \
	}
/* A named critical's key is its pointer's address (one per name). */
ENTRY_PTR(GOMP_critical_name_start)
EXIT_PTR(GOMP_critical_name_end)
ENTRY_PTR(omp_set_lock)
EXIT_PTR(omp_unset_lock)
ENTRY_PTR(omp_set_nest_lock)
EXIT_PTR(omp_unset_nest_lock)

int __wrap_omp_test_lock(void *l)
{
	REAL(omp_test_lock, int (*)(void *));
	int r = real(l);
	if (r && on())
		sync_obj(ACQ, l);
	return r;
}

int __wrap_omp_test_nest_lock(void *l)
{
	REAL(omp_test_nest_lock, int (*)(void *));
	int r = real(l);
	if (r && on())
		sync_obj(ACQ, l);
	return r;
}

/* A task runs task_body on a copy of a block: this header, then the
 * program's data at off. */
typedef struct task_hdr {
	omp_fn fn;
	team *t;
	uintptr_t key; /* its creation */
	size_t off;
} task_hdr;

static void task_body(void *p)
{
	task_hdr *h = p;
	team *t = h->t;
	sync_obj(ACQ, (void *)h->key);
	sync_obj(DROP, (void *)h->key);
	/* Every task of the team finished so far: those it depends on among
	 * them (depend clauses are not read: more order, never less). */
	sync_obj(ACQ, t ? &t->tasks : &no_team_tasks);
	h->fn((char *)p + h->off);
	sync_obj(REL, t ? &t->tasks : &no_team_tasks);
}

void __wrap_GOMP_task(omp_fn fn, void *data, void (*cpyfn)(void *, void *), long arg_size, long arg_align,
		      bool if_clause, unsigned flags, void **depend, int priority, void *detach)
{
	REAL(GOMP_task, void (*)(omp_fn, void *, void (*)(void *, void *), long, long, bool, unsigned, void **, int,
				 void *));
	if (!on() || cpyfn || arg_size < 0) {
		real(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, priority, detach);
		return;
	}
	long align = arg_align > (long)_Alignof(task_hdr) ? arg_align : (long)_Alignof(task_hdr);
	size_t off = (sizeof(task_hdr) + (size_t)align - 1) / (size_t)align * (size_t)align;
	size_t size = off + (size_t)arg_size;
	/* On the heap, not the stack: the data may be large; libgomp has
	 * copied it (or run the task) when GOMP_task returns. */
	char *space = malloc(size + (size_t)align);
	if (!space) {
		real(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, priority, detach);
		return;
	}
	char *blk = (char *)(((uintptr_t)space + (uintptr_t)align - 1) / (uintptr_t)align * (uintptr_t)align);
	task_hdr *h = (task_hdr *)blk;
	h->fn = fn;
	h->t = cur_team;
	h->key = shmrun_chk_new_key();
	h->off = off;
	if (arg_size > 0)
		memcpy(blk + off, data, (size_t)arg_size);
	sync_obj(REL, (void *)h->key);
	real(task_body, blk, NULL, (long)size, align, if_clause, flags, depend, priority, detach);
	free(space);
}

/* A taskloop's tasks: libgomp copies the data block for each task and
 * writes the task's bounds into its first two words, so the header goes
 * after them (at TL_HDR), the rest of the data after it, moved by a
 * multiple of its alignment; the task's body gives the program's function
 * the data as it was laid out. Reductions (whose data libgomp reads
 * itself) and copy functions run unwrapped. */
enum { TL_HDR = 16, TL_REDUCTION = 1 << 12, TL_NOGROUP = 1 << 11 };

typedef struct loop_hdr {
	omp_fn fn;
	team *t;
	uintptr_t key;  /* the taskloop's encountering */
	size_t shift;   /* the bytes the header takes */
	size_t size;    /* the program's data */
	size_t align;
} loop_hdr;

static void loop_body(void *p)
{
	loop_hdr h;
	memcpy(&h, (char *)p + TL_HDR, sizeof h);
	char space[h.size + h.align];
	char *d = (char *)(((uintptr_t)space + h.align - 1) / h.align * h.align);
	memcpy(d, p, TL_HDR);
	memcpy(d + TL_HDR, (char *)p + TL_HDR + h.shift, h.size - TL_HDR);
	sync_obj(ACQ, (void *)h.key);
	sync_obj(ACQ, h.t ? &h.t->tasks : &no_team_tasks);
	h.fn(d);
	sync_obj(REL, h.t ? &h.t->tasks : &no_team_tasks);
}

/* taskloop_shift is the bytes the header takes, a multiple of the data's
 * alignment. */
static size_t taskloop_shift(long align)
{
	size_t a = (size_t)align > 8 ? (size_t)align : 8;
	return (sizeof(loop_hdr) + a - 1) / a * a;
}

#define TASKLOOP(name, T)                                                                                        \
	void __wrap_##name(omp_fn fn, void *data, void (*cpyfn)(void *, void *), long arg_size, long arg_align,   \
			   unsigned flags, unsigned long num_tasks, int priority, T start, T end, T step)        \
	{                                                                                                        \
		REAL(name, void (*)(omp_fn, void *, void (*)(void *, void *), long, long, unsigned, unsigned long, \
				    int, T, T, T));                                                              \
		if (!on() || cpyfn || arg_size < TL_HDR || (flags & TL_REDUCTION)) {                             \
			real(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority, start, end, step); \
			return;                                                                                  \
		}                                                                                                \
		size_t align = arg_align > 8 ? (size_t)arg_align : 8, shift = taskloop_shift(arg_align);         \
		size_t size = (size_t)arg_size + shift;                                                          \
		char *space = malloc(size + align); /* libgomp copies it per task */                             \
		if (!space) {                                                                                    \
			real(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority, start, end, step); \
			return;                                                                                  \
		}                                                                                                \
		char *blk = (char *)(((uintptr_t)space + align - 1) / align * align);                            \
		loop_hdr h = {fn, cur_team, shmrun_chk_new_key(), shift, (size_t)arg_size, align};               \
		memcpy(blk, data, TL_HDR);                                                                       \
		memcpy(blk + TL_HDR, &h, sizeof h);                                                              \
		memcpy(blk + TL_HDR + shift, (char *)data + TL_HDR, (size_t)arg_size - TL_HDR);                  \
		sync_obj(REL, (void *)h.key);                                                                    \
		real(loop_body, blk, NULL, (long)size, (long)align, flags, num_tasks, priority, start, end, step); \
		free(space);                                                                                     \
		if (!(flags & TL_NOGROUP)) { /* it waited for its tasks */                                       \
			sync_obj(ACQ, cur_team ? &cur_team->tasks : &no_team_tasks);                             \
			sync_obj(DROP, (void *)h.key);                                                           \
		}                                                                                                \
	}
TASKLOOP(GOMP_taskloop, long)
TASKLOOP(GOMP_taskloop_ull, unsigned long long)

/* Waiting for tasks: every finished task of the team (more than the
 * children: safe). */
#define TASK_WAIT(name)                                                                                          \
	void __wrap_##name(void)                                                                                 \
	{                                                                                                        \
		REAL(name, void (*)(void));                                                                      \
		real();                                                                                          \
		if (on())                                                                                        \
			sync_obj(ACQ, cur_team ? &cur_team->tasks : &no_team_tasks);                             \
	}
TASK_WAIT(GOMP_taskwait)

void __wrap_GOMP_taskwait_depend(void **depend)
{
	REAL(GOMP_taskwait_depend, void (*)(void **));
	real(depend);
	if (on())
		sync_obj(ACQ, cur_team ? &cur_team->tasks : &no_team_tasks);
}
TASK_WAIT(GOMP_taskgroup_end)
