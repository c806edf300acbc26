/* capi.h - what the library's C and Go halves share (not installed). */
#ifndef SHMRUN_CAPI_H
#define SHMRUN_CAPI_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "mpi.h"

/* A window's predefined attributes, in C memory (MPI_Win_get_attr hands out
 * pointers to them): made at the window's creation, freed with it. */
typedef struct shmrun_win_attrs {
	MPI_Aint size;
	int disp_unit;
	int flavor;
	int model;
} shmrun_win_attrs;

/* A rank's epoch state on one window (internal/winc.Epoch, the same
 * layout: capi's tests compare the offsets and the bits). The Go and the C
 * synchronization calls both read and write it, so an epoch opened by
 * either is the one both check. It is written by synchronization calls,
 * ordered by the program, and read by RMA calls on any thread. */
typedef struct shmrun_epoch {
	uint8_t gate;       /* SHMRUN_GATE_* bits: zero when Lock and Lock_all may take their fast paths */
	uint8_t access_all; /* RMA to every target is allowed (fence epoch or Lock_all) */
	uint8_t lock_all;   /* a Lock_all epoch is open */
	uint8_t all_check;  /* that Lock_all took the window's Lock_all count */
	uint8_t fence_open; /* a fence opened a (possible) epoch */
	uint8_t post_open;  /* an exposure epoch (Post without Wait) is open */
	uint8_t pad[2];
	uint32_t fence_used; /* atomic: an RMA call was made since that fence */
	uint32_t fence_gen;  /* this rank's last fence on the fence words (read back from here, not there) */
	uint64_t flush_any;  /* ranks while lock_all, else 0 */
	int32_t start_n;     /* the open Start group's size, -1: none */
	int32_t post_n;      /* the open Post group's size, -1: none */
} shmrun_epoch;

/* Bits of a target's byte (winc.Tgt*). */
#define SHMRUN_TGT_ACCESS 1
#define SHMRUN_TGT_EXCLUSIVE 2
#define SHMRUN_TGT_SHARED 4
#define SHMRUN_TGT_NOCHECK 8
#define SHMRUN_TGT_CHECK 16
#define SHMRUN_TGT_LOCKED (SHMRUN_TGT_EXCLUSIVE | SHMRUN_TGT_SHARED)
/* Bits of shmrun_epoch.gate (winc.Gate*). */
#define SHMRUN_GATE_LOCKALL 1
#define SHMRUN_GATE_START 2
#define SHMRUN_GATE_FENCE 4
#define SHMRUN_GATE_NOLOCKS 8
#define SHMRUN_GATE_FREED 16
#define SHMRUN_GATE_CHECK 32
/* Where the bytes per target start, after the struct (winc.TgtOff). */
#define SHMRUN_EPOCH_TGT_OFF 64
/* The spin from which a wait pauses between polls (barrier.PauseFrom). */
#define SHMRUN_PAUSE_FROM 256

/* One target's part of a window, as this process maps it: what an RMA
 * call's bounds check and address need, on one line. */
struct shmrun_part {
	char *base;       /* its first byte */
	MPI_Aint size;    /* bytes */
	MPI_Aint maxdisp; /* size / disp unit, the largest displacement; -1 for disp unit 0 */
	MPI_Aint disp;    /* the disp unit */
};

/* A window's descriptor, in C memory, for the synchronization and RMA
 * calls that never leave C (mpi_fast.h): the parts of every rank as this
 * process maps them, the lock words, and the epoch state the Go half uses
 * too. Made at the window's creation (only for windows whose every part is
 * mapped here: MPI_Win_allocate_shared and MPI_Win_allocate), freed at
 * MPI_Win_free; the pointers it holds are into the window's segment and
 * the epoch state's mapping, neither of them Go's heap. */
typedef struct shmrun_win_desc {
	int n;             /* ranks */
	shmrun_epoch *ep;  /* this rank's epoch state */
	uint8_t *tgt;      /* per target: SHMRUN_TGT_* bits */
	struct shmrun_part *parts; /* per target: its part as mapped here */
	uint64_t **lockw;  /* per target: its lock word (FORMAT.md's lock line) */
	uint32_t **lsleep; /* per target: the lock word's sleepers */
	uint64_t *global;  /* the window's Lock_all count */
	uint32_t *gsleep;  /* its event's sleepers */
	/* The window's fence barrier (FORMAT.md's barrier line): the state
	 * word, its sleepers, the failure words of even and odd rounds, the
	 * ranks, and the spins before Go's futex phase. */
	uint64_t *fstate;
	uint32_t *fsleep;
	uint32_t *ffail[2];
	uint32_t fn;
	int spin;
	/* A window of up to SHMRUN_FLAG_FENCE_RANKS ranks fences on its fence
	 * words instead (FORMAT.md's "Fence"; fword[0] NULL otherwise): this
	 * rank's two words and their sleepers, the other rank's (NULL alone). */
	uint64_t *fword[2], *fpeer[2];
	uint32_t *fwsleep[2];
	/* PSCW (FORMAT.md), per rank r: postw[r] is post[r][me],
	 * completew[r] complete[r][me], startw[r] post[me][r], waitw[r]
	 * complete[me][r], bellsleep[r] r's doorbell's sleepers; the counters
	 * and the open groups' window ranks are the epoch state's. */
	uint32_t **postw, **completew, **startw, **waitw, **bellsleep;
	uint32_t *starts_from, *posts_to;
	int32_t *start_group, *post_group;
	/* The last two groups Post or Start took, as window ranks (C memory,
	 * filled by Go after a call it made). */
	struct shmrun_group_ranks {
		uintptr_t handle; /* 0: empty */
		int n;
		int32_t *ranks;
	} groups[2];
	/* A word of this process alone, on lines of its own: a locked add on
	 * it is the full fence of Flush (cheaper than MFENCE, as the Go side
	 * does it). The descriptor is allocated 128-byte aligned
	 * (shmrun_new_win_desc), so no other allocation's data, which another
	 * thread may write, shares the word's line or the pair of lines the
	 * prefetcher moves together. */
	_Alignas(128) uint64_t fence;
	char pad[120];
} shmrun_win_desc;

/* A rank's round counters of a communicator's collective area
 * (internal/winc.Coll: the same layout, held to it by capi's tests). */
typedef struct shmrun_coll {
	uint32_t round;  /* rounds this rank has published */
	uint32_t seen;   /* every rank has published through this round */
	uint64_t pending; /* parities published without waking their sleepers */
} shmrun_coll;

/* A communicator's descriptor for MPI_Barrier in C (mpi_fast.h), made by
 * the Go half once the communicator has its collective area, freed with
 * the communicator. The pointers are into the area's segment and the
 * round counters' mapping. */
typedef struct shmrun_comm_desc {
	uintptr_t handle;
	shmrun_coll *h;
	uint64_t sig[2];        /* the Barrier signature's words */
	uint32_t *sleepers;     /* [par]: this rank's lines' sleepers words */
	uint32_t n;
	uint32_t par; /* line parities: shmrun_coll_parities(n), a power of two */
	int spin;
	/* The one-round calls (mpi_fast.h's shmrun_fast_round): rank 0's
	 * flag line of parity 0, where the flag lines begin (rank q's line of
	 * parity p is par*q+p lines on), this rank, and a private word whose
	 * locked add is the full fence before the wake-up check. */
	char *lines;
	uint32_t me;
	uint64_t fence;
	/* Rank 0 of more than two ranks: the checker's done word
	 * (SHMRUN_CHECK_DONE), which it advances past each round it has
	 * compared; NULL elsewhere. */
	uint32_t *checked;
	/* Nonblocking collectives queued or running (capi's nbc.go): while
	 * nonzero the fast paths leave the collective area to them. */
	uint32_t nbc;
} shmrun_comm_desc;

/* A nonblocking collective's call as the Go half's entry point takes it
 * (mpi.c's shmrun_nbc_call_of), for its job to make there without the
 * way through the C half (capi's nbc.go: runCall): entry 0 none (the C
 * half's call), 1 shmReduce, 2 shmBcast, 3 shmMove, with those entry
 * points' kind and in-place flag. */
typedef struct {
	int entry, kind, inplace, root;
	char *sbuf, *rbuf;
	int64_t scount, rcount;
	uintptr_t stype, rtype, op, comm;
} shmrun_nbc_call;

/* What the small collectives know of the predefined datatypes and ops,
 * filled by the Go side when the library loads (a zero entry: not
 * known, the call takes the Go path): a datatype's element type (package
 * atomics' code, as the reductions' signatures record it), size and
 * class; the element type and the count multiplier of the data-movement
 * calls' signatures (package typesig's CollElem: MPI_2INT counts as
 * twice as many ints, MPI_FLOAT_INT as 8 mixed bytes); the signature
 * digest any number of its elements carry in a
 * message (package typesig's Uniform: the element type's code, an int's
 * for MPI_2INT; 0 for the pairs of two different halves, whose digest
 * grows with the count: the Go path sends those); a predefined op's code
 * (by handle - MPI_OP_NULL); and, by element type, the ops that apply to
 * it (bit code). */
enum { SHMRUN_CLS_SIGNED = 1, SHMRUN_CLS_UNSIGNED, SHMRUN_CLS_FLOAT, SHMRUN_CLS_OTHER };
typedef struct {
	uint8_t typ, size, cls, msig, mtyp, mmul;
} shmrun_ctype;
extern shmrun_ctype shmrun_ctypes[256];
/* Nonzero when this process is registered for the global expedited
 * membarrier (internal/raw's RegisterLightFence, set when the library
 * loads): the small collectives' wake-ups then skip their full fence. */
extern int shmrun_light_fence;
extern uint8_t shmrun_cops[32];
extern uint32_t shmrun_copok[32];

/* Communicator descriptors are cached by handle in a small table; a
 * collision leaves one of the two to the Go path. */
#define SHMRUN_COMM_SLOTS 64
#define SHMRUN_COMM_SLOT(h) ((((h) >> 4) ^ (h)) & (SHMRUN_COMM_SLOTS - 1))
extern shmrun_comm_desc *shmrun_comms[SHMRUN_COMM_SLOTS];

static inline void shmrun_set_comm(uintptr_t h, shmrun_comm_desc *d)
{
	__atomic_store_n(&shmrun_comms[SHMRUN_COMM_SLOT(h)], d, __ATOMIC_RELEASE);
}

/* shmrun_unset_comm uncaches d if its slot holds it. */
static inline void shmrun_unset_comm(shmrun_comm_desc *d)
{
	shmrun_comm_desc *want = d;
	__atomic_compare_exchange_n(&shmrun_comms[SHMRUN_COMM_SLOT(d->handle)], &want, NULL, 0, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE);
}

/* The point-to-point engine's state the eager fast paths share with Go
 * (internal/winc's P2P, P2PTx, P2PRx; capi's tests hold the offsets to
 * those): the engine's lock, whether Go's matching state is empty
 * (quiet), and per world rank the ring positions toward it (tx) and from
 * it (rx). Every field but lock belongs to the lock's holder. */
typedef struct {
	uint32_t lock;  /* 0 free, 1 held: compare-and-swap to take, store-release to give back */
	uint32_t quiet; /* 1 while Go's engine holds no operation in progress */
	uint32_t n;     /* world ranks */
	uint32_t eager; /* the largest message sent whole */
	int32_t spin;   /* polls of a receive before it hands its wait to Go */
	uint32_t cq;    /* receives queued in C (shmrun_cq), not matched nor moved into Go */
	uint64_t next_id; /* packet ids */
	uint64_t pad1[4];
} shmrun_p2p;
typedef struct {
	char *ring;          /* the peer's inbox's ring of this rank; NULL: not mapped */
	uint64_t *tail;      /* bytes the peer gave back */
	uint32_t *seq;       /* the peer's doorbell */
	uint32_t *sleepers;
	uint64_t head;       /* bytes written */
	uint64_t seen_tail;  /* the tail last read */
	uint32_t stamp;      /* stamp of the last packet written */
	uint32_t ring_len;
	uint64_t pad;
} shmrun_p2p_tx;
typedef struct {
	char *ring;     /* the sender's ring in this rank's inbox */
	uint64_t *tail; /* the tail published to the sender */
	uint64_t pos;   /* bytes consumed */
	uint64_t given; /* bytes given back */
	uint32_t stamp; /* stamp of the last packet consumed */
	uint32_t ring_len;
	uint64_t pad[3];
} shmrun_p2p_rx;

/* A communicator's point-to-point descriptor: the engine's state, the
 * context its packets carry, and its members' world ranks. Made by the
 * first send or receive on it that goes through Go, cached by handle like
 * the collective descriptors. */
typedef struct {
	uintptr_t handle;
	shmrun_p2p *e;
	shmrun_p2p_tx *tx; /* by world rank */
	shmrun_p2p_rx *rx;
	int32_t *world;    /* world rank of each rank */
	uint32_t ctx;
	uint32_t n;
	uint32_t me;
} shmrun_p2p_comm;
extern shmrun_p2p_comm *shmrun_p2ps[SHMRUN_COMM_SLOTS];

static inline void shmrun_set_p2p(uintptr_t h, shmrun_p2p_comm *d)
{
	__atomic_store_n(&shmrun_p2ps[SHMRUN_COMM_SLOT(h)], d, __ATOMIC_RELEASE);
}

/* shmrun_unset_p2p uncaches d if its slot holds it. */
static inline void shmrun_unset_p2p(shmrun_p2p_comm *d)
{
	shmrun_p2p_comm *want = d;
	__atomic_compare_exchange_n(&shmrun_p2ps[SHMRUN_COMM_SLOT(d->handle)], &want, NULL, 0, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE);
}

/* An eager MPI_Isend done in C completes at once; its request is a
 * handle SHMRUN_REQ_SENT | k << 4, k counting such sends (mod 2^26, so
 * that requests active at once differ), which the completion calls
 * complete in C and the Go side knows as a completed send (capi's
 * reqtab.go): not a slot handle (its low bits are not zero), within an
 * int (MPI_Request_toint). */
#define SHMRUN_REQ_SENT ((uintptr_t)0x40000008)
#define SHMRUN_REQ_SENT_K ((uintptr_t)0x3ffffff0) /* the bits of k << 4 */
#define SHMRUN_IS_REQ_SENT(h) (((uintptr_t)(h) & ~SHMRUN_REQ_SENT_K) == SHMRUN_REQ_SENT)

/* Receives queued in C. MPI_Irecv of an eager-sized basic type from a
 * given source, while Go's engine is quiet, takes its message from the
 * ring at once if it is there and nothing is queued before it, else
 * queues the receive here (shmrun_p2p.cq counts them); the completion
 * calls match the queued receives to the rings' packets in C
 * (p2p_fast.h). Go's engine, whenever its lock is taken in Go, first
 * moves the queued receives into its posted queue in the order they were
 * posted (capi's cq.go, internal/winc's CQMigrate), and from then on each
 * is a Go request. The queue is guarded by the engine's lock, except that
 * a slot's state is read with an acquire and set free with a release by
 * whoever completes its request.
 *
 * A queued receive's request is the handle SHMRUN_REQ_CQ | gen << 14 |
 * idx << 4: idx the slot, gen counting its uses (mod 2^16), so that a
 * completed handle is invalid and not the slot's next request. It fits
 * an int (MPI_Request_toint) and is neither a table handle nor a slot
 * handle of the Go side (low bits) nor SHMRUN_REQ_SENT. */
#define SHMRUN_CQ_SLOTS 1024
#define SHMRUN_CQ_ORDER 2048 /* a power of two */
enum { SHMRUN_CQ_FREE, SHMRUN_CQ_POSTED, SHMRUN_CQ_DONE, SHMRUN_CQ_MIGRATED };
#define SHMRUN_REQ_CQ ((uintptr_t)0x40000004)
#define SHMRUN_REQ_CQ_BITS ((uintptr_t)0x3ffffff0) /* gen << 14 | idx << 4 */
#define SHMRUN_IS_REQ_CQ(h) (((uintptr_t)(h) & ~SHMRUN_REQ_CQ_BITS) == SHMRUN_REQ_CQ)
#define SHMRUN_CQ_HANDLE(idx, gen) (SHMRUN_REQ_CQ | (uintptr_t)(gen) << 14 | (uintptr_t)(idx) << 4)
#define SHMRUN_CQ_IDX(h) ((uint32_t)((uintptr_t)(h) >> 4) & (SHMRUN_CQ_SLOTS - 1))
#define SHMRUN_CQ_GEN(h) ((uint32_t)((uintptr_t)(h) >> 14) & 0xffff)
typedef struct {
	uint32_t state; /* gen << 2 | SHMRUN_CQ_*: stored with a release */
	int32_t src;    /* the source's rank in the communicator */
	int32_t world;  /* its world rank */
	int32_t tag;    /* or MPI_ANY_TAG */
	uint32_t ctx;   /* the communicator's context */
	uint32_t sig;   /* the data's signature digest (0: bytes, any) */
	uint64_t es;    /* element size */
	uint64_t room;  /* bytes the buffer holds */
	void *buf;
	uintptr_t comm; /* the communicator's handle */
	shmrun_p2p_rx *rx; /* the source's ring */
	shmrun_p2p_tx *tx; /* and its doorbell (the give-back's) */
	int32_t rtag;   /* once done: the message's tag */
	uint32_t pad;
	uint64_t n;     /* once done: its bytes */
} shmrun_cq_slot;
typedef struct {
	shmrun_p2p *e;   /* the engine's state, once a receive is queued */
	uint32_t head;   /* order's live part is [head, tail) */
	uint32_t tail;
	uint32_t cursor; /* where the search for a free slot starts */
	uint32_t pad;
	uint32_t order[SHMRUN_CQ_ORDER]; /* gen << 16 | idx, in the order posted */
	shmrun_cq_slot slot[SHMRUN_CQ_SLOTS];
} shmrun_cq_t;
extern shmrun_cq_t shmrun_cq;
/* Persistent point-to-point requests that C may start (MPI_Send_init's
 * and MPI_Recv_init's of the standard mode): made by the Go side with
 * the request, looked up by its handle's slot in the Go side's request
 * table, and started in C as an eager MPI_Isend or an MPI_Irecv queued in
 * C (cq: its handle) while their fast paths allow. state says who holds
 * the started operation: nobody (inactive), C (MPI_Wait, MPI_Waitall,
 * MPI_Test and MPI_Testall complete it in C while they can; any other
 * call hands it to Go first), or Go. Only the thread that starts,
 * completes or frees the request touches it, as the standard requires. */
enum { SHMRUN_PERS_INACTIVE, SHMRUN_PERS_C, SHMRUN_PERS_GO };
#define SHMRUN_PERS_SLOTS 65536
typedef struct {
	uintptr_t handle; /* the request's handle */
	uint32_t state;   /* SHMRUN_PERS_*, stored with a release */
	uint32_t send;    /* a send's, else a receive's */
	void *buf;
	MPI_Count count;
	uintptr_t dt;   /* the MPI_Datatype */
	uintptr_t comm; /* the MPI_Comm */
	int32_t peer, tag;
	uintptr_t cq; /* started in C: the receive's queued handle (a send: 0) */
} shmrun_pers;
extern shmrun_pers *shmrun_perss[SHMRUN_PERS_SLOTS];

/* shmrun_cq_pop takes the first receive still queued, in post order, out
 * of the queue, returning its slot (whose state the caller sets) or -1.
 * Called by Go (capi's cq.go) with the engine's lock held. */
int shmrun_cq_pop(void);

/* Window handles are SHMRUN_WIN_BASE + 16 * slot; slot indexes
 * shmrun_wins, which holds the descriptor (NULL: the Go path only). */
#define SHMRUN_WIN_SLOTS 4096
#define SHMRUN_WIN_BASE ((uintptr_t)0x20000000)
extern shmrun_win_desc *shmrun_wins[SHMRUN_WIN_SLOTS];

/* shmrun_new_win_desc allocates a zeroed descriptor on its own 128-byte
 * lines (sizeof is a multiple of 128: the fence word's alignment). */
static inline shmrun_win_desc *shmrun_new_win_desc(void)
{
	void *p = NULL;
	if (posix_memalign(&p, 128, sizeof(shmrun_win_desc)) != 0)
		return NULL;
	memset(p, 0, sizeof(shmrun_win_desc));
	return p;
}

static inline void shmrun_set_win(int slot, shmrun_win_desc *d)
{
	__atomic_store_n(&shmrun_wins[slot], d, __ATOMIC_RELEASE);
}

/* shmcc --check (chk.c): the kinds of the ranges the hooks compare
 * loads and stores with, and the Go half's calls that keep the table. */
enum {
	SHMRUN_CHK_WIN = 1,            /* window memory mapped here */
	SHMRUN_CHK_READ_BY_RMA = 2,    /* a pending call's origin buffer: not to be written */
	SHMRUN_CHK_WRITTEN_BY_RMA = 3, /* a pending call's result buffer: not to be touched */
};
int shmrun_chk_add(uintptr_t lo, uintptr_t hi, uint32_t kind, uint32_t id, uintptr_t win, int32_t target);
void shmrun_chk_del(uint32_t mask, uintptr_t win, int32_t target, uint32_t id);
extern uint32_t shmrun_chk_n; /* ranges in the table (0: the hooks return at once) */
void shmrun_chk_slow(uintptr_t a, uintptr_t n, int write, void *pc);
int shmrun_where(uintptr_t pc, const char **fname, uintptr_t *fbase);
/* A run of a thread's loads or stores of window memory (chk.c). */
typedef struct {
	uintptr_t lo, hi, pc;
	uint32_t id;
	int32_t write;
	int32_t thread; /* shmrun_chk_thread() of the thread that made it */
} shmrun_chk_run;
/* shmrun_chk_thread is the calling thread's number for the checker's
 * clocks: the first to ask gets 0 (MPI_Init asks), the next 1, ...; when
 * none is left, shmrun_chk_threads-1. */
int shmrun_chk_thread(void);
extern uint32_t shmrun_chk_numbers; /* thread numbers given (chk.c) */
extern int shmrun_chk_threads;
/* shmrun_chk_omp_on: the wrappers of omp.c and pthread.c tell the
 * checker what orders threads. */
extern int shmrun_chk_omp_on;
/* shmrun_chk_mark notes that the calling thread's clock has something to
 * release through the atomics' object (pthread.c): a window access or a
 * checker call since its last release there. Per thread number, not per
 * thread: a section's number is a clock of its own. */
void shmrun_chk_mark(void);
enum { SHMRUN_CHK_NUMBERS = 32 }; /* at least rmacheck.Threads */
extern int shmrun_chk_dirty[SHMRUN_CHK_NUMBERS];
int shmrun_chk_current(void); /* the calling thread's number, -1 if none yet */
void shmrun_chk_atomic_release(void);
void shmrun_chk_atomic_acquire(void);
/* shmrun_chk_new_key is a fresh synchronization object's key, above any
 * address; shmrun_chk_real is libgomp's or libc's function name. */
uintptr_t shmrun_chk_new_key(void);
void *shmrun_chk_real(const char *name);
/* OpenMP sections run as threads of their own (omp.c): a thread number
 * never given before (-1: none is left), and the calling thread's number
 * set to it and back. */
int shmrun_chk_take_slot(void);
void shmrun_chk_set_thread(int slot);
int shmrun_chk_drain(shmrun_chk_run *out, int max);
extern uint32_t shmrun_chk_buffered;
static inline uint32_t shmrun_chk_any(void) { return __atomic_load_n(&shmrun_chk_buffered, __ATOMIC_SEQ_CST); }

/* shmrun_call_pc is the return address of this thread's latest RMA call
 * (the line --check names for it). */
extern __thread uintptr_t shmrun_call_pc __attribute__((tls_model("initial-exec")));
static inline uintptr_t shmrun_get_call_pc(void) { return shmrun_call_pc; }

#endif
