//go:build !race

/*
 * tsanhooks.c - shmcc --check's hooks (chk.c has the table they read):
 * every entry point gcc and clang call under -fsanitize=thread. Not in
 * race-detector builds of this package (go test -race), whose runtime
 * defines the same names; the installed library is never one.
 *
 * The atomic entry points perform their atomics (sequentially consistent:
 * at least as strong as any order asked for; 16 bytes on x86-64 by
 * cmpxchg16b); they are not checked.
 */
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include "capi.h"

static inline void chk(const volatile void *p, uintptr_t n, int write, void *pc)
{
	if (__builtin_expect(__atomic_load_n(&shmrun_chk_n, __ATOMIC_RELAXED) == 0, 1))
		return;
	shmrun_chk_slow((uintptr_t)p, n, write, pc);
}

#define RA __builtin_extract_return_addr(__builtin_return_address(0))

/* The access hooks, every name and size the compilers emit. */
#define ACCESS(N)                                                                  \
	void __tsan_read##N(void *p) { chk(p, N, 0, RA); }                           \
	void __tsan_write##N(void *p) { chk(p, N, 1, RA); }                          \
	void __tsan_unaligned_read##N(void *p) { chk(p, N, 0, RA); }                 \
	void __tsan_unaligned_write##N(void *p) { chk(p, N, 1, RA); }                \
	void __tsan_volatile_read##N(void *p) { chk(p, N, 0, RA); }                  \
	void __tsan_volatile_write##N(void *p) { chk(p, N, 1, RA); }                 \
	void __tsan_unaligned_volatile_read##N(void *p) { chk(p, N, 0, RA); }        \
	void __tsan_unaligned_volatile_write##N(void *p) { chk(p, N, 1, RA); }       \
	void __tsan_read##N##_pc(void *p, void *pc) { chk(p, N, 0, pc); }            \
	void __tsan_write##N##_pc(void *p, void *pc) { chk(p, N, 1, pc); }
ACCESS(1)
ACCESS(2)
ACCESS(4)
ACCESS(8)
ACCESS(16)

void __tsan_read_range(void *p, unsigned long n) { chk(p, n, 0, RA); }
void __tsan_write_range(void *p, unsigned long n) { chk(p, n, 1, RA); }
void __tsan_read_range_pc(void *p, unsigned long n, void *pc) { chk(p, n, 0, pc); }
void __tsan_write_range_pc(void *p, unsigned long n, void *pc) { chk(p, n, 1, pc); }

void __tsan_init(void) {}
void __tsan_func_entry(void *pc) { (void)pc; }
void __tsan_func_exit(void) {}
void __tsan_vptr_update(void **p, void *v) { (void)p, (void)v; }
void __tsan_vptr_read(void **p) { (void)p; }
void __tsan_ignore_thread_begin(void) {}
void __tsan_ignore_thread_end(void) {}

/* The copies the compiler leaves as libc calls: shmcc --check links with
 * --wrap=memcpy (and memmove, memset), which sends the program's calls
 * here; the library's own go straight to libc. clang instruments the
 * copies it expands itself through __tsan_memcpy and its kin. */
#define COPY(NAME, FN)                                      \
	void *NAME(void *d, const void *s, size_t n)        \
	{                                                   \
		chk(s, n, 0, RA);                           \
		chk(d, n, 1, RA);                           \
		return FN(d, s, n);                         \
	}
COPY(__wrap_memcpy, memcpy)
COPY(__wrap_memmove, memmove)
COPY(__tsan_memcpy, memcpy)
COPY(__tsan_memmove, memmove)

#define SET(NAME)                                           \
	void *NAME(void *d, int c, size_t n)                \
	{                                                   \
		chk(d, n, 1, RA);                           \
		return memset(d, c, n);                     \
	}
SET(__wrap_memset)
SET(__tsan_memset)

/* The atomic entry points: performed (sequentially consistent, whatever
 * order the program asked for), not checked, and told to the checker as
 * synchronization (pthread.c): a store or read-modify-write releases
 * before it, a load or read-modify-write acquires after it. */
#define SC __ATOMIC_SEQ_CST
#define REL_() shmrun_chk_atomic_release()
#define ACQ_() shmrun_chk_atomic_acquire()
#define ATOMIC(N, T)                                                                                \
	T __tsan_atomic##N##_load(const volatile T *a, int mo)                                      \
	{                                                                                           \
		(void)mo;                                                                           \
		T r = __atomic_load_n(a, SC);                                                       \
		ACQ_();                                                                             \
		return r;                                                                           \
	}                                                                                           \
	void __tsan_atomic##N##_store(volatile T *a, T v, int mo)                                   \
	{                                                                                           \
		(void)mo;                                                                           \
		REL_();                                                                             \
		__atomic_store_n(a, v, SC);                                                         \
	}                                                                                           \
	T __tsan_atomic##N##_exchange(volatile T *a, T v, int mo)                                   \
	{                                                                                           \
		(void)mo;                                                                           \
		REL_();                                                                             \
		T r = __atomic_exchange_n(a, v, SC);                                                \
		ACQ_();                                                                             \
		return r;                                                                           \
	}                                                                                           \
	T __tsan_atomic##N##_fetch_add(volatile T *a, T v, int mo)                                  \
	{                                                                                           \
		(void)mo;                                                                           \
		REL_();                                                                             \
		T r = __atomic_fetch_add(a, v, SC);                                                 \
		ACQ_();                                                                             \
		return r;                                                                           \
	}                                                                                           \
	T __tsan_atomic##N##_fetch_sub(volatile T *a, T v, int mo)                                  \
	{                                                                                           \
		(void)mo;                                                                           \
		REL_();                                                                             \
		T r = __atomic_fetch_sub(a, v, SC);                                                 \
		ACQ_();                                                                             \
		return r;                                                                           \
	}                                                                                           \
	T __tsan_atomic##N##_fetch_and(volatile T *a, T v, int mo)                                  \
	{                                                                                           \
		(void)mo;                                                                           \
		REL_();                                                                             \
		T r = __atomic_fetch_and(a, v, SC);                                                 \
		ACQ_();                                                                             \
		return r;                                                                           \
	}                                                                                           \
	T __tsan_atomic##N##_fetch_or(volatile T *a, T v, int mo)                                   \
	{                                                                                           \
		(void)mo;                                                                           \
		REL_();                                                                             \
		T r = __atomic_fetch_or(a, v, SC);                                                  \
		ACQ_();                                                                             \
		return r;                                                                           \
	}                                                                                           \
	T __tsan_atomic##N##_fetch_xor(volatile T *a, T v, int mo)                                  \
	{                                                                                           \
		(void)mo;                                                                           \
		REL_();                                                                             \
		T r = __atomic_fetch_xor(a, v, SC);                                                 \
		ACQ_();                                                                             \
		return r;                                                                           \
	}                                                                                           \
	T __tsan_atomic##N##_fetch_nand(volatile T *a, T v, int mo)                                 \
	{                                                                                           \
		(void)mo;                                                                           \
		REL_();                                                                             \
		T r = __atomic_fetch_nand(a, v, SC);                                                \
		ACQ_();                                                                             \
		return r;                                                                           \
	}                                                                                           \
	int __tsan_atomic##N##_compare_exchange_strong(volatile T *a, T *c, T v, int mo, int fmo)   \
	{                                                                                           \
		(void)mo, (void)fmo;                                                                \
		REL_();                                                                             \
		int r = __atomic_compare_exchange_n(a, c, v, 0, SC, SC);                            \
		ACQ_();                                                                             \
		return r;                                                                           \
	}                                                                                           \
	int __tsan_atomic##N##_compare_exchange_weak(volatile T *a, T *c, T v, int mo, int fmo)     \
	{                                                                                           \
		(void)mo, (void)fmo;                                                                \
		REL_();                                                                             \
		int r = __atomic_compare_exchange_n(a, c, v, 1, SC, SC);                            \
		ACQ_();                                                                             \
		return r;                                                                           \
	}                                                                                           \
	T __tsan_atomic##N##_compare_exchange_val(volatile T *a, T c, T v, int mo, int fmo)         \
	{                                                                                           \
		(void)mo, (void)fmo;                                                                \
		REL_();                                                                             \
		__atomic_compare_exchange_n(a, &c, v, 0, SC, SC);                                   \
		ACQ_();                                                                             \
		return c;                                                                           \
	}
ATOMIC(8, int8_t)
ATOMIC(16, int16_t)
ATOMIC(32, int32_t)
ATOMIC(64, int64_t)

#if defined(__x86_64__)
/* 16-byte atomics: cmpxchg16b (every x86-64 CPU that runs Go has it). */
typedef __int128 a128;

__attribute__((target("cx16"))) static a128 cas128(volatile a128 *a, a128 old, a128 v)
{
	return __sync_val_compare_and_swap(a, old, v);
}

a128 __tsan_atomic128_load(const volatile a128 *a, int mo)
{
	(void)mo;
	a128 r = cas128((volatile a128 *)a, 0, 0); /* writes only 0 over 0 */
	ACQ_();
	return r;
}

#define RMW128(NAME, NEW)                                                        \
	a128 __tsan_atomic128_##NAME(volatile a128 *a, a128 v, int mo)          \
	{                                                                      \
		(void)mo;                                                      \
		REL_();                                                        \
		a128 old = cas128(a, 0, 0), cur;                               \
		while ((cur = cas128(a, old, (NEW))) != old)                   \
			old = cur;                                             \
		ACQ_();                                                        \
		return old;                                                    \
	}
RMW128(exchange, v)
RMW128(fetch_add, old + v)
RMW128(fetch_sub, old - v)
RMW128(fetch_and, old &v)
RMW128(fetch_or, old | v)
RMW128(fetch_xor, old ^ v)
RMW128(fetch_nand, ~(old & v))

void __tsan_atomic128_store(volatile a128 *a, a128 v, int mo) { __tsan_atomic128_exchange(a, v, mo); }

int __tsan_atomic128_compare_exchange_strong(volatile a128 *a, a128 *c, a128 v, int mo, int fmo)
{
	(void)mo, (void)fmo;
	REL_();
	a128 cur = cas128(a, *c, v);
	ACQ_();
	if (cur == *c)
		return 1;
	*c = cur;
	return 0;
}

int __tsan_atomic128_compare_exchange_weak(volatile a128 *a, a128 *c, a128 v, int mo, int fmo)
{
	return __tsan_atomic128_compare_exchange_strong(a, c, v, mo, fmo);
}

a128 __tsan_atomic128_compare_exchange_val(volatile a128 *a, a128 c, a128 v, int mo, int fmo)
{
	(void)mo, (void)fmo;
	REL_();
	a128 r = cas128(a, c, v);
	ACQ_();
	return r;
}
#endif

void __tsan_atomic_thread_fence(int mo)
{
	(void)mo;
	REL_();
	__atomic_thread_fence(SC);
	ACQ_();
}

void __tsan_atomic_signal_fence(int mo)
{
	(void)mo;
	__atomic_signal_fence(SC);
}
