package raw

import "unsafe"

// getfp returns its caller's frame pointer register (BP).
func getfp() unsafe.Pointer

// ReturnPC returns the return address of the function that calls it: one
// load, the word above that function's frame pointer. The caller must
// have a frame of its own (it is not inlined anywhere: mark it
// //go:noinline), or the address is its caller's caller's.
func ReturnPC() uintptr

// FrameReturns fills pcs with the return addresses of the calling
// goroutine's frames, innermost first (pcs[0] is in FrameReturns' caller),
// by following the frame pointers Go keeps on amd64, as the runtime's
// execution tracer does: a frame's saved BP is the word at its BP, its
// return address the word above. A few loads per frame, where
// runtime.Callers decodes tables per frame. It returns how many it wrote:
// fewer than len(pcs) when the chain ended (the goroutine's first frame).
// An inlined call has no frame of its own, so these are physical frames:
// runtime.CallersFrames on them names the innermost function of each.
//
// Invariant that makes the loads safe: callers walk a goroutine running
// Go code, not one inside a callback from C (C frames need not keep the
// chain), so every frame links to its caller's and the chain ends at 0;
// each step must also go up the stack by less than a MiB, so a link the
// chain does not describe ends the walk instead of being followed. The
// stack cannot move under the walk: it makes no call, and the runtime
// does not move a stack stopped at an asynchronous preemption.
//
//go:noinline
//go:nosplit
func FrameReturns(pcs []uintptr) int {
	fp := getfp()
	n := 0
	for n < len(pcs) && fp != nil {
		pcs[n] = *(*uintptr)(unsafe.Add(fp, unsafe.Sizeof(uintptr(0))))
		n++
		next := *(*unsafe.Pointer)(fp)
		if uintptr(next) <= uintptr(fp) || uintptr(next)-uintptr(fp) >= 1<<20 {
			break
		}
		fp = next
	}
	return n
}
