// Package raw holds the module's unsafe code: word pointers into mapped
// memory for sync/atomic, typed views of mapped bytes, bit casts between
// element types and their bit patterns, the futex calls on shared words, the
// frame-pointer walk the checker keys source lines by, and
// the one-instruction hot paths built on them that other packages inline.
//
// Every function here states its invariant above it. Callers own the
// mapping: a pointer or slice derived from mapped bytes is valid only while
// those bytes stay mapped (using it after Unmap faults). Shared words are
// touched only through sync/atomic (or the release stores of package
// atomics); segments hold offsets, never addresses, since every process maps
// a segment at its own address.
//
// It is internal: shm, barrier, atomics, win and internal/team build their
// public, checked APIs on it.
//
// Byte order: the bit casts assume a little-endian machine (amd64 and arm64,
// the only targets; atomics' TestLittleEndian guards it).
package raw
