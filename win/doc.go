// Package win implements MPI-3 one-sided communication over shared memory:
// windows of the standard's four flavors (AllocateShared and Allocate,
// which allocate; Create over memory the ranks have; CreateDynamic, with
// Attach and Detach), reached both by
// load/store through SharedQuery and by RMA calls (Put, Get, Accumulate,
// GetAccumulate, FetchAndOp, CompareAndSwap and their request forms) inside
// epochs opened by Fence, Post/Start/Complete/Wait, or Lock/LockAll with
// Flush and Sync. MPI 3.1 chapter 11 ("One-Sided Communications") decides
// wherever this documentation is silent; MPI 4.1 where noted.
//
// It sits above comm, atomics, barrier and shm. A window spans at most
// 32767 ranks (its lock words count tickets in 15 bits); a job may have
// more, in windows of sub-communicators.
//
// # Memory model and completion
//
// The model is always Unified (MPI_WIN_UNIFIED): there is one copy of the
// memory. RMA calls complete eagerly: the copy or the atomic is done when the
// call returns. Synchronization calls supply the ordering: Fence is a barrier
// over the window's group plus a full fence; Flush, FlushAll, FlushLocal,
// FlushLocalAll and Sync are full memory fences; Unlock fences and then
// releases the lock word; Post and Complete release, Start and Wait acquire.
// Because RMA completes eagerly, every call that opens access waits for the
// target to be ready: Start waits for the matching Posts, Lock for the lock
// word, and a Fence that may open an epoch still synchronizes (only
// ModeNoPrecede|ModeNoSucceed together skip the barrier).
//
// Go code that polls shared memory written by another rank must use
// sync/atomic loads; typed views from View are for bulk work between
// synchronizations. Slices from Local, SharedQuery and View must not be used
// after Free: the memory is unmapped, and touching it faults.
//
// # Memory of every kind
//
// What a window's memory is decides what reaching it costs. Memory of a
// window made by AllocateShared or Allocate, memory from comm.AllocMem and
// memory inside another window live in shared-memory objects that every
// rank maps: RMA on them is a copy or an atomic instruction. Other memory
// given to Create or Attach (a Go slice from make) stays private to its
// owner: Put and Get reach it by process_vm_writev/readv, one system call
// each, and accumulates take a lock of the window, read, combine and write
// back, the owner's own accumulates included. The memory stays pinned
// (runtime.Pinner) until Free or Detach, and must hold no Go pointers.
// Where the kernel forbids one process to reach another's memory, Create
// over private memory fails at once and Attach of it is ErrRMAAttach, both
// naming comm.AllocMem.
//
// # Derived datatypes
//
// PutType, GetType, AccumulateType and GetAccumulateType take a datatype
// of package dtype on the origin and on the target side (MPI_Put and its
// kin with derived datatypes): the origin's runs and the target's are
// walked in step, so strided and structured data move without packing;
// accumulates through them stay atomic per element.
//
// # Goroutines
//
// Any goroutine may make RMA calls, Flush, FlushAll, FlushLocal,
// FlushLocalAll and Sync inside an open epoch, and goroutines may Lock and
// Unlock different targets at once (passive-target epochs to different
// targets overlap, as under MPI_THREAD_MULTIPLE); each records its epoch in
// its target's byte of the rank's epoch state and nowhere else. Two
// goroutines must not lock the same target at once (the standard makes a
// second lock of a target the process holds erroneous). The other
// synchronization and collective calls on one window (Fence, Post, Start,
// Complete, Wait, LockAll, UnlockAll, Free) are ordered by the program: two
// of them must not race, nor race with a Lock or Unlock, and RMA calls must
// not race with the synchronization call that closes their epoch.
//
// # Errors
//
// Every call returns an error; misuse never corrupts memory or panics.
// Errors wrap an MPI error class (ErrRMASync, ErrRMARange, ErrRank, ...)
// testable with errors.Is, and name the call, the rank and the numbers.
// A collective call that fails on one rank fails on every rank with the same
// class and message.
//
// # Two backends
//
// Everything above describes the default build, shmrun's backend on one
// node. Built with -tags mpi (Open MPI; -tags mpi,mpich for MPICH) the
// package runs over the system's MPI instead, across nodes, started by
// that MPI's launcher: the same API, the same error classes and epoch
// checks, one MPI call per call, except that RMA to an AllocateShared
// window (or an Allocate one whose ranks share a node, made shared) in
// the MPI's unified memory model is done by load and store in Go, and its
// passive-target locks and Post/Start/Complete/Wait by atomic
// instructions, with no MPI call. docs/MPI.md lists what that backend
// covers so far and what it does differently.
package win
