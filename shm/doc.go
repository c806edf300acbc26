// Package shm creates, opens, reserves, maps and unlinks the shared-memory
// objects that hold shmrun's control and window segments (files in a tmpfs
// such as /dev/shm, or memfds), validates their common header, and gives
// typed access to mapped bytes. It is a library in its own right: nothing in
// it knows of ranks, windows or jobs.
//
// It is the bottom layer: every other package reaches shared memory through
// it. Its pointer arithmetic (View, Bytes) lives with the rest of the
// module's unsafe code in one internal package, each helper with its
// invariant written above it.
//
// Invariants:
//   - An object is created O_CREAT|O_EXCL with mode 0600 whatever the umask;
//     a name that exists already is an error, never reused. (shmrun names
//     its objects shmrun.<job>.<id>, which is how its cleanup finds them.)
//   - Peers' objects are opened O_NOFOLLOW and checked with fstat (owner, mode,
//     size) before they are mapped.
//   - A mapping lives from Map until Unmap; slices and word pointers derived
//     from it must not be used after Unmap (the pages are gone: that faults).
//   - Segments hold fixed-size, pointer-free records and offsets, never
//     addresses: each process maps a segment at its own address.
package shm
