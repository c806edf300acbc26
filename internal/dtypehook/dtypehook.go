// Package dtypehook lets the C interface give a datatype what the MPI
// constructors cannot express. Package dtype sets it (dtype cannot
// import the C interface's packages, which import it).
package dtypehook

// SetAlign gives t (a *dtype.Type just made of opaque bytes, with no
// upper bound set, not yet committed nor used) the alignment align, a
// power of two, and rounds its extent up to a multiple of it: how a predefined C type without a Go element (long double, its
// complex and pair kin, Fortran's REAL16 and pairs of reals) enters a
// struct type with the padding C gives it (MPI 4.1 §5.1.6's ε).
var SetAlign func(t any, align int64) error
