// Package format is the one Go source of shmrun's cross-process contract:
// every offset, bit field, state and environment variable name that two
// processes — Go ranks, the launcher, C code attached to a segment — must
// agree on, and the layout math that places them. win, internal/team,
// launcher and comm read their numbers from here and nowhere else.
//
// # Place in the layers
//
// format sits beside shm, barrier and atomics and imports them only for the
// parts of the contract that are those libraries' own formats: the common
// segment header (shm), the barrier line (barrier) and the lock stripes
// (atomics). It holds no state and does no I/O.
//
// # Invariants
//
//   - A value here is the value on the wire: changing one changes the
//     segment format, and FormatVersion in package shm must change with it.
//   - include/shmrun/format.h is generated from these constants and
//     functions by internal/format/gen (go generate ./internal/format); a
//     test fails when the checked-in header is stale, another compiles it
//     with gcc and compares its layout math with this package's, and another
//     checks docs/FORMAT.md's tables against the constants.
//   - Every group of words that one process writes while others read sits on
//     a Line of its own; 64-bit words sit at offsets that are multiples of 8
//     (the tests prove both for the sync block).
//   - Segments hold offsets, never addresses.
package format

//go:generate go run ./gen -o ../../include/shmrun/format.h
