package raw

import _ "unsafe" // go:linkname

// ProcPin pins the calling goroutine to the processor (the runtime's P) it
// runs on and returns that processor's id, from 0 to GOMAXPROCS-1: until
// ProcUnpin, the goroutine is not preempted and no other goroutine runs on
// that processor, so a word indexed by the id is the caller's alone (a
// per-processor access slot claimed by a plain store, package win's
// dynamic windows). It is runtime.procPin, which sync.Pool uses and the
// runtime keeps available to linkname. Between the two calls the caller
// must not block, allocate much or take a lock (the scheduler cannot run
// there); keep the span a few loads and stores or a short copy.
//
//go:linkname ProcPin runtime.procPin
func ProcPin() int

// ProcUnpin ends ProcPin's span (runtime.procUnpin).
//
//go:linkname ProcUnpin runtime.procUnpin
func ProcUnpin()
