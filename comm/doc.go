// Package comm is the rank side of a shmrun job: Init attaches to the job
// the launcher started (or makes a singleton world of size 1 when the program
// runs on its own, as MPI allows), and the returned world communicator gives
// Rank, Size, Group and Abort. Finalize ends the rank's part. Communicators
// are made from it by Dup, Split, SplitType, Create and CreateGroup, and
// with a Cartesian topology by CartCreate and CartSub (DimsCreate,
// CartGet, CartRank, CartCoords, CartShift and Topology describe it; graph
// and distributed-graph topologies and the neighborhood collectives are
// not provided).
//
// It sits above barrier and shm and below win. All state lives on the *Comm
// values; the only process-wide state is which world Init returned, so that
// Finalize can find it (MPI_Init/MPI_Finalize are process-wide too).
//
// # Collectives
//
// Barrier, Ibarrier, Bcast, Reduce, Allreduce, Gather(v), Scatter(v),
// Allgather(v), Alltoall(v), ReduceScatterBlock, Scan and Exscan, with
// explicit in-place forms (AllreduceInPlace and its kind, for MPI_IN_PLACE),
// work on any communicator, over elements of any atomics.Elem type, with a
// predefined atomics.Op or a user op from OpCreate. They use the shared
// segment directly, never messages: a communicator's first collective call
// makes its collective area (docs/FORMAT.md), in which small payloads ride
// in per-rank cache lines and large ones move through per-rank staging
// buffers a chunk at a time, two chunks in flight, each rank copying or
// reducing its share. Reductions fold in rank order, x0 op (x1 op (... op
// x_{n-1})), so a floating-point result is the same bits on every rank and
// in every run with the same number of ranks. A rank's send and receive
// buffers may not share the memory the call uses (MPI 4.1 §2.3): that is
// ErrBuffer on every rank, and the InPlace forms (MPI_IN_PLACE) are how a
// call reads and writes one buffer; Sendrecv and Isendrecv refuse
// overlapping buffers too (SendrecvReplace takes one).
//
// Each has a nonblocking form (Ibcast, Iallreduce, IallreduceInPlace and
// the rest: MPI_Ibcast ...), which returns a Request at once: the call is
// queued on its communicator and runs in call order, so that it
// progresses while the caller computes or exchanges messages (a rank may
// start one, then send the message another rank needs before it starts
// its own). A small one (its data inline) puts this rank's part out in
// the call itself and reads the others' in the Test or Wait that finds
// them there, as an MPI's test progresses a collective; a larger one runs
// on a goroutine of its communicator's. A blocking collective on the same
// communicator first lets the queued ones finish (they use the same
// area); Ibarrier keeps its own counters and never waits for them.
// And each has a persistent form (MPI 4.0's MPI_Allreduce_init and the
// rest: AllreduceInit, AllreduceInitInPlace, BarrierInit, ...): its
// arguments fixed once, each Start (or Startall) queues the operation as
// the nonblocking form would, and Wait, Test and their kin complete it,
// leaving the request inactive for the next Start.
//
// Collective calls must be made by every rank of the communicator in the
// same order. The first round of every blocking collective carries each
// rank's signature (call, element type, op, root, count), and all of them
// are checked: mismatched calls, counts, types, ops or roots, and a
// rank's own bad arguments, are an error on every rank (ErrCount, ErrType,
// ErrOp, ErrRoot, ErrArg...), never a hang or a corruption, and the
// communicator stays usable. Types are compared as the typed forms
// describe (coll_type.go: basic types exactly, data mixing them by
// size), a pair type as its two halves, as MPI defines it: 2 TwoInt meet
// 4 int32, FloatInt and DoubleInt meet a struct of the same two types
// (and C's MPI_FLOAT_INT, MPI_DOUBLE_INT), the data-movement calls move
// DoubleInt, LongInt and ShortInt without their Go struct's padding, and
// the reductions take pairs as pairs. Some ranks may learn of it a few calls late:
// in a call of one round for it, a rank that reads no other rank's data
// (the root of a one-round Bcast or Scatter, the sender of a one-round
// Reduce or Gather, rank 0 of a one-round Scan or Exscan) returns once its
// data is published, without waiting for the others, and a rank that reads
// only some ranks' data (the other ranks of that Bcast or Scatter, the
// other ranks of that Scan) compares only their signatures with its own
// before it reads them. On two ranks each checks the other's signature in
// its next collective call on the communicator; on more, rank 0 checks
// every rank's for all (in the call, or in a later one of its own) and
// the others learn its verdict in a later call: the next that waits for
// every rank (a Barrier, an Allreduce), or one that finds itself a ring of
// rounds ahead of what rank 0 has checked. A mismatch is then the error of
// that call (which still runs and delivers its data, joined to the call's
// own error if it has one; errors.Is(err, ErrEarlierCall) tells), or of
// Free, or of Finalize for the world, if one of them comes first (they
// wait for rank 0's verdict). Dup, Split, Create, SplitType and a window's
// creation pass it on to the next call instead; a communicator never used
// or freed again never reports it. A rank reports one mismatch once; of
// several close together some ranks may name only the last. Since ranks
// learn of a mismatch in different calls, a program that goes on after
// one should make the same next call on every rank (or end). Loops of
// such calls run ahead of the slowest rank, as the MPIs' do, which matters
// most when ranks outnumber cores: on two ranks by one call, on more by up
// to 63 (fewer from 65 ranks on): a rank waits only for the ranks whose
// data it reads, the ranks that read its own, and rank 0's checks.
// Under shmrun --check every rank waits for every signature. A rank that dies inside a collective ends the
// job: the others return ErrAborted.
//
// # Messages
//
// Send, Ssend, Recv, Isend, Issend, Irecv, Sendrecv, SendrecvReplace,
// MPI 4.0's Isendrecv and IsendrecvReplace (one request for both), Probe, Iprobe, Mprobe and Improbe (with Message.Recv and Irecv), their
// typed forms (SendT, RecvT, ...), and the completion calls (Request.Wait,
// Test, Cancel; Waitall, Waitany, Waitsome, Testall, Testany, Testsome)
// follow MPI's matching rules on any communicator: messages from one sender
// with one tag on one communicator arrive in order, AnySource and AnyTag
// match anything, communicators never see each other's messages, and a
// short buffer is ErrTruncate with the message's real length in the
// Status. Every rank has an inbox with a ring per sender (docs/FORMAT.md);
// messages up to 8 KiB are copied into it, larger ones are copied by both
// ranks at once from their two ends, each in one copy: the receiver reads
// the sender's pinned buffer by process_vm_readv while the sender writes
// into the receiver's pinned buffer by process_vm_writev (where the
// kernel allows neither, the sender copies through its ring), so that a
// receive completes even while its sender computes. Ranks move messages only while
// one of their goroutines is inside a call of the runtime (MPI's weak
// progress): a point-to-point call, or the wait of any other (a Barrier, a
// Fence), which moves on the transfers in pieces in flight (a large
// message through the ring, when single copies are off, or one whose
// receiver has answered), checking every millisecond while one moves,
// less often while it stands still, and a wait that has slept unwoken for
// its policy's whole sleep (50 ms) makes a pass over its rings too, which
// matches what arrived for a receive posted before it (a rank that posts
// an Irecv of a large message and waits in a Barrier for a rank whose
// blocking Send of it waits for the match: complete, 50 ms late); any
// goroutine may make them (MPI_THREAD_MULTIPLE).
//
// A message carries a digest of its type signature, and a receive whose
// data's signature differs is ErrType (MPI's type matching, the prefix
// rule included: a message may fill part of the receive). Data of one
// basic type match that type however they are laid out; dtype.Byte and
// the byte forms match anything. The pair types (atomics.FloatInt and its
// kin) are their two basic types, as MPI defines them: their generic
// forms send and receive the value and the int without the Go struct's
// padding, as the typed forms do, so SendT of DoubleInt meets RecvType of
// a struct of a float64 and an int32, and 2 TwoInt meet 4 int32; a
// Status's Count and GetCount count pairs.
//
// Persistent requests (SendInit, SsendInit, RecvInit and their typed
// forms; Request.Start, Startall, Request.Free) fix a send's or a
// receive's arguments once, as MPI_Send_init and MPI_Recv_init do; each
// Start starts the operation anew and Wait or Test completes it, after
// which the request is inactive until the next Start. A loop of Startall
// and WaitallInto allocates nothing, where each Irecv allocates its
// request: in a message-rate loop the garbage collector's work, and its
// write barriers on the engine's stores while it marks, are what
// persistent requests save.
//
// # Two backends
//
// Everything above describes the default build, shmrun's backend on one
// node. Built with -tags mpi (Open MPI; -tags mpi,mpich for MPICH) the
// package runs over the system's MPI instead, across nodes, started by
// that MPI's launcher: the same API, the same error classes and epoch
// checks, one MPI call per call. docs/MPI.md lists what that backend
// covers so far and what it does differently.
package comm
