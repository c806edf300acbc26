// Package atomics holds the element-wise kernels behind MPI's accumulate
// calls — MPI_Accumulate, MPI_Get_accumulate, MPI_Fetch_and_op and
// MPI_Compare_and_swap — applied directly to the mapped bytes of a shared
// segment, and the lock stripes that make the elements the hardware cannot
// update atomically atomic anyway. ReduceLocal (MPI_Reduce_local) is the
// same arithmetic without atomicity, on private buffers: the reduction
// kernel of comm's collectives, a tight loop per op and element size
// (reduce.go), bit-for-bit equal to what an accumulate would compute.
//
// # Place in the layers
//
// atomics sits below win and comm and above barrier and shm. win checks the epoch,
// the target rank and the bounds against the target's part of the segment,
// turns (target, disp) into a segment offset, and calls a kernel; the kernel
// does the update before it returns (RMA on shared windows completes
// eagerly). The kernels know nothing of ranks, epochs or windows, keep no
// state outside their arguments, and never allocate.
//
// One-element calls on an aligned int32/uint32/int64/uint64/float32/float64
// (the exact types; named types go the general way, several calls longer)
// take a hot path of a few compares and one native atomic: FetchAndOp(Sum) on
// an int64 is a LOCK XADD and a few predictable branches. That case alone is
// the module's internal FetchAddWord, small enough for the compiler to inline
// into package win's frames (a test holds it there), so an int64 Sum from win
// makes no call into this package at all. Everything else goes through
// TypeOf, Check, a range check and a loop per size class (hot.go,
// kernels.go).
//
// # Atomicity (MPI 3.1 §11.7.1)
//
// Each element is updated atomically with respect to every other accumulate
// on the same element with the same predefined datatype, from any process:
//
//   - 8- and 4-byte integers at offsets aligned to their size: one native
//     atomic instruction for Sum, Replace (a store; a swap when fetching),
//     NoOp (a load), Band and Bor (when fetching, amd64 has no fetch-and-and:
//     a CAS loop); a compare-and-swap loop for the other ops.
//   - 1- and 2-byte integers at aligned offsets: an atomic operation on the
//     aligned 32-bit word that contains them (a CAS loop, or and/or with a
//     mask that leaves the other bytes alone). A CAS compares the whole word,
//     so a concurrent change to a neighbouring byte — even a plain store by
//     the rank that owns it — makes it retry; nothing is lost.
//   - float32 and float64 at aligned offsets: a CAS loop on the bits.
//   - complex64 and complex128, the pair types, and every element whose
//     offset is not a multiple of its size: under the lock stripe chosen by
//     the element's offset (below), with plain loads and stores inside it.
//     Replace and NoOp take the stripe too, so nobody sees a torn value.
//
// A CAS loop whose new value equals the old one writes nothing: its load is
// the atomic step (so a Max that changes nothing is a read).
//
// C code attached to the segment must take the same path for the same
// element (lock-free exactly when the datatype is an integer or a float and
// the offset is a multiple of its size; the stripe otherwise). On a lock-free
// element it may use any atomic instruction of the element's size or of the
// containing word (a byte-wide LOCK XADD, for instance): every atomic
// read-modify-write of those bytes is atomic with respect to the others, and
// a word CAS fails if any byte of the word changed.
//
// Which path an element takes depends only on its datatype and its offset in
// the segment, never on the op or on addresses, so every process and every
// op agree, and mixing ops on one element (MPI's default accumulate_ops
// same_op_no_op, and even different ops) stays atomic; accumulate_ops=same_op
// changes nothing here. Different datatypes on overlapping bytes are not
// atomic with each other, as the standard allows.
//
// # Ordering
//
// A kernel finishes every element before it returns, in increasing offset
// order, each with a sequentially consistent atomic step (or under a stripe
// whose release is one). Calls made one after the other from one origin are
// therefore ordered rar, raw, war and waw, the standard's default
// accumulate_ordering; accumulate_ordering=none allows nothing cheaper here.
// Completion towards other processes' plain loads is Flush's job in win.
//
// # Semantics of the ops
//
// target = target op origin, element by element (MPI 3.1 §5.9.2, §11.3.4):
//   - Integers wrap on overflow (Sum, Prod), signed and unsigned alike.
//   - Land, Lor, Lxor treat nonzero as true and store 1 or 0, as C does.
//   - Max and Min on floats follow math.Max and math.Min: a NaN operand
//     gives NaN (except that +Inf wins Max and -Inf wins Min even against a
//     NaN), and +0 > -0.
//   - MinLoc and MaxLoc on pair types compare the values; the better one
//     wins with its index; on equal values (-0 equals +0) the lower index
//     wins and the target keeps its value. A NaN never compares better, so a
//     NaN target stays and a NaN origin never replaces anything. Only the
//     value and index fields are written, never the padding.
//   - Check holds the op/type table; forbidden combinations are ErrOp.
//
// # Segments
//
// mem is the whole mapped segment: it must start 8-byte aligned and be a
// multiple of 8 bytes long (every mapping is), so that an offset's alignment
// is the same in every process and the word containing any byte is inside
// the segment. Offsets, never addresses, pick paths and stripes. Kernels
// check that their elements lie inside mem and touch no byte outside them
// (the containing-word CAS rewrites neighbours only with their own values,
// atomically). Little-endian machines only (amd64, arm64).
//
// # Stripe format and protocol
//
// This is part of the segment format (docs/FORMAT.md); C code follows it
// exactly. The stripe region lies in the window's sync block: n stripes of
// StripeLen (128) bytes each, n a power of two ≥ 1, 8-byte aligned, zeroed
// by the segment's creator. Stripe k is the bytes [k*128, k*128+128):
//
//	offset 0  uint32 lock      0 free, 1 held
//	offset 4  uint32 seq       futex word, incremented by an unlocking process that saw sleepers
//	offset 8  uint32 sleepers  processes in (or entering) the futex sleep
//	offset 12 reserved, zero
//
// Every access to these words is atomic and sequentially consistent
// (sync/atomic in Go, __atomic_* with __ATOMIC_SEQ_CST in C); the futex is
// shared (never FUTEX_PRIVATE_FLAG).
//
// Hash: the element that starts at segment offset off (a byte offset from
// the start of the segment) is guarded by stripe
//
//	k = ((uint64(off) >> 6) * 0x9E3779B97F4A7C15 mod 2^64) >> 32  &  (n - 1)
//
// Elements in one 64-byte granule of data share a stripe; the Fibonacci
// multiplier spreads granules that are a large power of two apart (the same
// element in each rank's page-aligned part). An element that straddles
// granules belongs to the granule of its first byte.
//
// Lock: CAS lock 0→1; on success the stripe is held. Otherwise wait: spin
// and then yield (barrier.Policy), each time trying "lock == 0 and CAS lock
// 0→1"; then sleep: sleepers += 1, s = seq, try the CAS again (on success
// sleepers -= 1, held), futex_wait(&seq, s, timeout Policy.Sleep), sleepers
// -= 1, retry. Before each sleep and after each wake-up check the job's
// abort word; if it is set give up (the job is ending; nothing is held).
//
// Unlock: old = exchange(lock, 0), and old must be 1 (anything else means
// the sync block is corrupt: fail loudly); then if sleepers != 0: seq += 1
// and futex_wake(&seq, all). The exchange is a full barrier before the load
// of sleepers; with the waiter's increment of sleepers before its CAS
// (Dekker), either the unlocker sees the sleeper or the sleeper sees the
// free lock, so no wake-up is lost.
//
// Rules: hold at most one stripe at a time (so stripes cannot deadlock);
// never block, call out, or touch another stripe while holding one; inside
// the stripe read the element, compute, and write only the element's bytes
// (for pair types only the value and index fields). A process that dies
// holding a stripe is a job failure: the launcher sets the abort word and
// every waiter gives up.
package atomics
