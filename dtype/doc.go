// Package dtype is MPI's derived datatypes: descriptions of strided and
// structured data (a matrix column, an array of structs, a sub-block of a
// matrix) that the RMA calls of package win take on the origin and the
// target side, so that nobody packs by hand.
//
// A Type is built from basic types (Of[float64](), Byte, or a Go struct
// type by Of[T]) with the constructors Contiguous, Vector, Hvector,
// Indexed, Hindexed, IndexedBlock, HindexedBlock, Struct, Subarray, Darray
// and Resized (MPI_Type_contiguous and its kin), queried with Size, Extent, LB,
// TrueLB, TrueExtent and Envelope, and committed with Commit
// (MPI_Type_commit) before it describes data. Commit compiles the type once
// into its flat list of (offset, length) runs in type-map order, adjacent
// runs merged, and its type signature (the sequence of basic types); Pack
// and Unpack (MPI_Pack, MPI_Unpack) and the RMA calls walk those runs.
//
// Types are immutable once built and safe for concurrent use; Commit may be
// called from any goroutine, once or many times. All sizes and offsets are
// bytes; counts and strides of Vector, Indexed and IndexedBlock are in
// extents of the old type, as in MPI. Every constructor checks its
// arguments (negative counts, lengths that disagree, extents that overflow
// int64) and returns an error wrapping ErrArg or ErrCount, never a panic.
package dtype
