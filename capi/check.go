//go:build !mpi

package main

/*
#include <stdint.h>
#include "capi.h"
*/
import "C"

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/internal/rmacheck"
	"github.com/shmrun/shmrun/win"
)

// shmcc --check's Go half. A program compiled by shmcc --check calls
// tsanhooks.c's hooks on its loads and stores; they compare each with the
// table of ranges kept here: window memory mapped in this process
// (checked against RMA by the window's checker, as win.Checked's loads
// and stores are) and the buffers of this process's RMA calls that have
// not completed (MPI: an origin buffer is not to be written, nor a result
// buffer touched, until the call completes at a flush, unlock, fence or
// complete). A program built without --check never calls the hooks; with
// --check off (no shmrun --check), the table stays empty.

var chkOn = rmacheck.On()

// chkThreads gives each C thread its own clock (rmacheck.Threads): the
// thread calling MPI_Init is thread 0; the OpenMP wrappers (omp.c) start
// telling the checker of forks, joins, barriers, criticals, locks and
// tasks.
func chkThreads() {
	C.shmrun_chk_threads = C.int(min(rmacheck.Threads, C.SHMRUN_CHK_NUMBERS))
	C.shmrun_chk_thread()
	rmacheck.ThreadOf = func() int {
		// One thread numbered (MPI_Init's, 0): no C call. A thread that
		// has no number yet, calling MPI, counts as thread 0 meanwhile
		// (more order, never less).
		if C.shmrun_chk_numbers == 1 {
			return 0
		}
		return int(C.shmrun_chk_thread())
	}
	C.shmrun_chk_omp_on = 1
}

// The OpenMP wrappers' synchronization (omp.c): op 0 releases, 1
// acquires, 2 drops object key for the calling thread.
//
//export shmChkOmp
func shmChkOmp(op C.int, key C.uintptr_t) {
	t := int(C.shmrun_chk_thread()) + 1
	switch op {
	case 0:
		rmacheck.SyncRelease(uintptr(key), t)
	case 1:
		rmacheck.SyncAcquire(uintptr(key), t)
	case 2:
		rmacheck.SyncDrop(uintptr(key))
	}
}

type chkPart struct {
	h       uintptr // the window's handle
	w       *win.Win
	target  int
	base    uintptr
	n       uintptr // its bytes
	dynamic bool    // a dynamic window's region: the checker's offsets are addresses
}

type chkOp struct {
	id                uint32
	h                 uintptr
	call, site, epoch string
	winID, target     int
	result            bool   // the call writes the buffer (Get's origin, a result buffer)
	what              string // "origin", "result", "compare"
	runs              [][2]uintptr
	settle            []chkSettled // its bytes in window memory mapped here (chkSettle)
	entry             int          // the thread that made it (rmacheck.Now)
	issue             uint32       // its clock then
}

// chkSettled is a pending call's buffer bytes [lo, lo+n) in part p.
type chkSettled struct {
	p     chkPart
	lo, n uintptr
}

var chk struct {
	sync.Mutex
	settling int // pending calls with bytes in window memory
	next     uint32
	parts    map[uint32]chkPart
	ops      []chkOp // pending calls, oldest first
	full     bool
}

// chkAdd puts [lo, lo+n) of kind in the table. chk is locked.
func chkAdd(lo uintptr, n int64, kind C.uint32_t, id uint32, h uintptr, target int) {
	if n <= 0 {
		return
	}
	if C.shmrun_chk_add(C.uintptr_t(lo), C.uintptr_t(lo+uintptr(n)), kind, C.uint32_t(id), C.uintptr_t(h), C.int32_t(target)) != 0 && !chk.full {
		chk.full = true
		fmt.Fprintln(os.Stderr, "shmrun --check: more buffers pending and window parts mapped than the C checker's table holds; some loads and stores are not checked")
	}
}

// chkNewID is a fresh record number (never 0). chk is locked.
func chkNewID() uint32 {
	chk.next++
	if chk.next == 0 {
		chk.next++
	}
	return chk.next
}

// chkWindow puts the memory of window w (handle h) mapped here in the
// table: every rank's part of a shared window, this rank's of the others
// (a dynamic window's regions at attach).
func chkWindow(h uintptr, w *win.Win) {
	if !chkOn {
		return
	}
	chk.Lock()
	defer chk.Unlock()
	if chk.parts == nil {
		chk.parts = map[uint32]chkPart{}
	}
	add := func(target int, b []byte, dynamic bool) {
		if len(b) == 0 {
			return
		}
		id := chkNewID()
		chk.parts[id] = chkPart{h: h, w: w, target: target, base: raw.Addr(b), n: uintptr(len(b)), dynamic: dynamic}
		chkAdd(raw.Addr(b), int64(len(b)), C.SHMRUN_CHK_WIN, id, h, target)
	}
	switch w.Attr().Flavor {
	case win.FlavorDynamic:
	case win.FlavorShared:
		for r := range w.Size() {
			if s, err := w.SharedQuery(r); err == nil {
				add(r, s.Bytes, false)
			}
		}
	default:
		add(w.Rank(), w.Local(), false)
	}
}

// chkAttach puts a dynamic window's attached region in the table, or
// drops it (detach).
func chkAttach(h uintptr, w *win.Win, b []byte, attach bool) {
	if !chkOn || len(b) == 0 {
		return
	}
	chk.Lock()
	defer chk.Unlock()
	if attach {
		id := chkNewID()
		chk.parts[id] = chkPart{h: h, w: w, target: w.Rank(), base: raw.Addr(b), n: uintptr(len(b)), dynamic: true}
		chkAdd(raw.Addr(b), int64(len(b)), C.SHMRUN_CHK_WIN, id, h, w.Rank())
		return
	}
	for id, p := range chk.parts {
		if p.h == h && p.base == raw.Addr(b) {
			C.shmrun_chk_del(0, 0, 0, C.uint32_t(id))
			delete(chk.parts, id)
		}
	}
}

// chkFlush records the runs of loads and stores of window memory the
// hooks have gathered (rmacheck.BeforeClock: before this process's clock
// changes, and before MPI_Win_free frees a window).
func chkFlush() {
	// A drain another thread has begun may hold this thread's runs: they
	// must be recorded before this thread's clock changes, so wait for it
	// (the drainer counts itself in before it takes any run).
	if C.shmrun_chk_any() == 0 && drain.active.Load() == 0 {
		return
	}
	drain.Lock()
	defer drain.Unlock()
	drain.active.Add(1)
	defer drain.active.Add(-1)
	if drain.runs == nil {
		drain.runs = cArray((*C.shmrun_chk_run)(C.calloc(64, C.sizeof_shmrun_chk_run)), 64)
	}
	for {
		n := int(C.shmrun_chk_drain(&drain.runs[0], C.int(len(drain.runs))))
		for _, r := range drain.runs[:n] {
			shmCheckLocal(r.id, r.lo, r.hi-r.lo, C.int(r.write), r.pc, C.int(r.thread))
		}
		if n < len(drain.runs) {
			return
		}
	}
}

// drain is chkFlush's buffer, in C memory (passed to C on every drain).
var drain struct {
	sync.Mutex
	active atomic.Int32 // a drain is under way (chkFlush)
	runs   []C.shmrun_chk_run
}

// chkFinalize records what the hooks gathered and empties the table
// (MPI_Finalize): windows left unfreed go with the runtime, and the hooks
// must not hand their memory to a checker that is gone.
func chkFinalize() {
	if !chkOn {
		return
	}
	chkFlush()
	chk.Lock()
	defer chk.Unlock()
	C.shmrun_chk_del(1<<C.SHMRUN_CHK_WIN|1<<C.SHMRUN_CHK_READ_BY_RMA|1<<C.SHMRUN_CHK_WRITTEN_BY_RMA, 0, -1, 0)
	chk.parts, chk.ops, chk.settling = map[uint32]chkPart{}, nil, 0
}

// chkFree drops everything of window h (MPI_Win_free).
func chkFree(h uintptr) {
	if !chkOn {
		return
	}
	drain.Lock() // no drain records into the window once this returns
	defer drain.Unlock()
	chk.Lock()
	defer chk.Unlock()
	C.shmrun_chk_del(1<<C.SHMRUN_CHK_WIN|1<<C.SHMRUN_CHK_READ_BY_RMA|1<<C.SHMRUN_CHK_WRITTEN_BY_RMA, C.uintptr_t(h), -1, 0)
	for id, p := range chk.parts {
		if p.h == h {
			delete(chk.parts, id)
		}
	}
	chkDropOps(func(o chkOp) bool { return o.h == h })
}

// chkComplete drops the buffers of window h's calls to target (-1: every
// target): they completed (a flush, unlock, fence, complete).
func chkComplete(h uintptr, target int) {
	if !chkOn {
		return
	}
	chk.Lock()
	defer chk.Unlock()
	if len(chk.ops) == 0 {
		return
	}
	mine := func(o chkOp) bool { return o.h == h && (target < 0 || o.target == target) }
	keep := false
	for _, o := range chk.ops {
		if mine(o) && !o.known() {
			keep = true
			break
		}
	}
	if !keep { // the common case: one call of the table's
		C.shmrun_chk_del(1<<C.SHMRUN_CHK_READ_BY_RMA|1<<C.SHMRUN_CHK_WRITTEN_BY_RMA, C.uintptr_t(h), C.int32_t(target), 0)
		chkDropOps(mine)
		return
	}
	chkDropOps(func(o chkOp) bool {
		if !mine(o) || !o.known() {
			return false
		}
		C.shmrun_chk_del(0, 0, 0, C.uint32_t(o.id))
		return true
	})
}

// known reports whether the calling thread knows call o was made (made
// it, or learned its thread's clock then): MPI completes at a flush the
// process's calls made before it, which another thread's call is only
// when something orders it first. The others stay pending.
func (o chkOp) known() bool { return rmacheck.Knows(o.entry, o.issue) }

// chkSettle records the buffers in window memory mapped here of the
// pending calls that complete now: window h's to target (-1: every
// target), or (h 0) the request's records first..first+n-1. Between the
// call and its completion the RMA wrote its result buffer (read its
// origin buffer) at some moment: as another thread's or rank's access to
// those bytes is ordered with neither end, it conflicts with one made by
// the completing thread now — recorded before the completing call's
// synchronization releases the thread's clock, so whoever acquires it
// is ordered after.
func chkSettle(h uintptr, target int, first uint32, n int) {
	if !chkOn {
		return
	}
	type access struct {
		p         chkPart
		lo, n     uintptr
		write     bool
		site, how string
	}
	var acc []access
	chk.Lock()
	if chk.settling == 0 {
		chk.Unlock()
		return
	}
	for _, o := range chk.ops {
		if len(o.settle) == 0 || h != 0 && (o.h != h || target >= 0 && o.target != target || !o.known()) || h == 0 && (o.id < first || o.id >= first+uint32(n)) {
			continue
		}
		for _, st := range o.settle {
			acc = append(acc, access{st.p, st.lo, st.n, o.result, o.site, o.call + "'s " + o.what + " buffer"})
		}
	}
	chk.Unlock()
	for _, a := range acc {
		lo := uint64(a.lo)
		if !a.p.dynamic {
			lo -= uint64(a.p.base)
		}
		rmacheck.LocalAccess(a.p.w, a.p.target, lo, uint64(a.n), a.write, a.site, 0, a.how)
	}
}

// chkDropOps drops the pending calls drop says. chk is locked.
func chkDropOps(drop func(o chkOp) bool) {
	chk.ops = slices.DeleteFunc(chk.ops, drop)
	chk.settling = 0
	for _, o := range chk.ops {
		if len(o.settle) > 0 {
			chk.settling++
		}
	}
}

// chkBuffer is one buffer of an RMA call: count instances of t at b.
type chkBuffer struct {
	b      []byte
	count  int64
	t      *dtype.Type
	result bool   // the call writes it
	what   string // "origin", "result", "compare"
}

// chkRMA puts the buffers of an RMA call of window h to target in the
// table until the call completes, and returns their records' numbers
// (consecutive: first, n) for a request form's completion (chkDone).
func chkRMA(h uintptr, w *win.Win, call string, target int, bufs ...chkBuffer) (first uint32, n int) {
	if !chkOn || target == win.ProcNull {
		return 0, 0
	}
	id, epoch := rmacheck.WindowOf(w, target)
	site := callSite()
	entry, issue := rmacheck.Now()
	chk.Lock()
	defer chk.Unlock()
	for _, b := range bufs {
		if len(b.b) == 0 {
			continue
		}
		kind := C.uint32_t(C.SHMRUN_CHK_READ_BY_RMA)
		if b.result {
			kind = C.SHMRUN_CHK_WRITTEN_BY_RMA
		}
		op := chkNewID()
		if n == 0 {
			first = op
		}
		n++
		o := chkOp{id: op, h: h, call: call, site: site, epoch: epoch, winID: id, target: target, result: b.result, what: b.what,
			entry: entry, issue: issue}
		base := raw.Addr(b.b)
		if b.t == nil {
			o.runs = [][2]uintptr{{base, base + uintptr(len(b.b))}}
		} else {
			_ = b.t.Each(int(b.count), func(off, n int64) bool {
				if n > 0 {
					o.runs = append(o.runs, [2]uintptr{base + uintptr(off), base + uintptr(off+n)})
				}
				return true
			})
		}
		chkPending(o)
		for _, r := range o.runs {
			chkAdd(r[0], int64(r[1]-r[0]), kind, op, h, target)
			for _, p := range chk.parts {
				if lo, hi := max(r[0], p.base), min(r[1], p.base+p.n); lo < hi {
					o.settle = append(o.settle, chkSettled{p, lo, hi - lo})
				}
			}
		}
		if len(o.settle) > 0 {
			chk.settling++
		}
		chk.ops = append(chk.ops, o)
	}
	return first, n
}

// chkPending reports where the buffer of call o overlaps a pending call's
// buffer and one of the two writes it (two Gets into one buffer, a Put
// from a Get's): the second call uses bytes the first has not finished
// with. chk is locked.
func chkPending(o chkOp) {
	for _, p := range chk.ops {
		if !p.result && !o.result {
			continue // both read
		}
		for _, a := range p.runs {
			for _, b := range o.runs {
				lo, hi := max(a[0], b[0]), min(a[1], b[1])
				if lo >= hi {
					continue
				}
				did := "read"
				if o.result {
					did = "written"
				}
				first, second := p.call+" at "+p.site, o.call+" at "+o.site
				pair := []string{first, second}
				sort.Strings(pair)
				rmacheck.Report(fmt.Sprintf("%d|%s|%s", p.winID, pair[0], pair[1]),
					fmt.Sprintf("window %d: rank %d's bytes [%#x, %#x) of the %s buffer of %s to rank %d (%s) are %s by %s (its %s buffer) before the call completes (%s)",
						p.winID, rmacheck.Self().Rank(), lo, hi, p.what, first, p.target, orNone(p.epoch), did, second, o.what, completers(p.call)))
				return
			}
		}
	}
}

func orNone(epoch string) string {
	if epoch == "" {
		return "no epoch"
	}
	return epoch
}

// chkDone drops the records first..first+n-1 (a request form's buffers,
// at its request's completion: the program may use them again).
func chkDone(first uint32, n int) {
	if !chkOn || n == 0 {
		return
	}
	chk.Lock()
	defer chk.Unlock()
	for i := range n {
		id := first + uint32(i)
		C.shmrun_chk_del(0, 0, 0, C.uint32_t(id))
		chkDropOps(func(o chkOp) bool { return o.id == id })
	}
}

// shmCheckLocal is a load or store of window memory the hooks saw: n
// bytes at addr, in the table's part id, by the instruction before pc.
//
//export shmCheckLocal
func shmCheckLocal(id C.uint32_t, addr, n C.uintptr_t, write C.int, pc C.uintptr_t, thread C.int) {
	chk.Lock()
	p, ok := chk.parts[uint32(id)]
	chk.Unlock()
	if !ok {
		return
	}
	lo := uint64(addr)
	if !p.dynamic {
		lo -= uint64(p.base)
	}
	rmacheck.LocalAccess(p.w, p.target, lo, uint64(n), write != 0, siteAt(uintptr(pc)), int(thread)+1, "")
}

// shmCheckOrigin is a load or store the hooks saw of a pending call's
// buffer (a store to an origin buffer; any access to a result buffer).
//
//export shmCheckOrigin
func shmCheckOrigin(id C.uint32_t, addr, n C.uintptr_t, write C.int, pc C.uintptr_t) {
	chk.Lock()
	i := slices.IndexFunc(chk.ops, func(o chkOp) bool { return o.id == uint32(id) })
	var o chkOp
	if i >= 0 {
		o = chk.ops[i]
	}
	chk.Unlock()
	if i < 0 {
		return
	}
	did := "written"
	if o.result && write == 0 {
		did = "read"
	}
	access := "load"
	if write != 0 {
		access = "store"
	}
	at := siteAt(uintptr(pc))
	call := o.call + " at " + o.site
	pair := []string{call, access + " at " + at}
	sort.Strings(pair)
	epoch := orNone(o.epoch)
	rmacheck.Report(fmt.Sprintf("%d|%s|%s", o.winID, pair[0], pair[1]),
		fmt.Sprintf("window %d: rank %d's bytes [%#x, %#x) of the %s buffer of %s to rank %d (%s) are %s by a %s at %s before the call completes (%s)",
			o.winID, rmacheck.Self().Rank(), uintptr(addr), uintptr(addr+n), o.what, call, o.target, epoch, did, access, at, completers(o.call)))
}

// completers names the calls that complete an RMA call at its origin,
// for a report: a request-based call's request too.
func completers(call string) string {
	const epoch = "MPI_Win_flush, MPI_Win_flush_local, their _all forms, MPI_Win_unlock, MPI_Win_unlock_all, MPI_Win_fence or MPI_Win_complete"
	if strings.HasPrefix(call, "MPI_R") {
		return "MPI_Wait or MPI_Test of its request, " + epoch
	}
	return epoch
}

// callSite is the line of this thread's latest RMA call (mpi.c notes its
// caller), for the checker's reports.
func callSite() string { return siteAt(uintptr(C.shmrun_get_call_pc())) }

var sites struct {
	sync.Mutex
	at   map[uintptr]string
	objs map[string]*dwarf.Data
}

// siteAt names the C source line of return address pc ("dir/file.c:line",
// from the object's DWARF line table: compile with -g, as shmcc --check
// does), or the object and offset when it has no line table.
func siteAt(pc uintptr) string {
	if pc == 0 {
		return "a C program (no return address)"
	}
	sites.Lock()
	defer sites.Unlock()
	if s, ok := sites.at[pc]; ok {
		return s
	}
	if sites.at == nil {
		sites.at, sites.objs = map[uintptr]string{}, map[string]*dwarf.Data{}
	}
	s := resolve(pc)
	sites.at[pc] = s
	return s
}

func resolve(pc uintptr) string {
	var fname *C.char
	var fbase C.uintptr_t
	if C.shmrun_where(C.uintptr_t(pc-1), &fname, &fbase) == 0 {
		return fmt.Sprintf("%#x (in no object)", pc)
	}
	path := C.GoString(fname)
	if path == "" {
		path = "/proc/self/exe"
	}
	d, ok := sites.objs[path]
	if !ok {
		if f, err := elf.Open(path); err == nil {
			d, _ = f.DWARF()
			f.Close()
		}
		sites.objs[path] = d
	}
	// A PIE or a library's DWARF holds addresses relative to its load
	// address; a non-PIE executable's, absolute ones.
	rel := uint64(pc - 1 - uintptr(fbase))
	if d != nil {
		for _, a := range [...]uint64{rel, uint64(pc - 1)} {
			if s, ok := lineOf(d, a); ok {
				return s
			}
		}
	}
	return fmt.Sprintf("%s+%#x (no line: compile with -g)", filepath.Base(path), rel)
}

// lineOf looks pc up in d's line tables. It walks the table of pc's
// compilation unit itself: LineReader.SeekPC misses pcs in a unit whose
// table has several sequences (g++ puts main in .text.startup).
func lineOf(d *dwarf.Data, pc uint64) (string, bool) {
	r := d.Reader()
	cu, err := r.SeekPC(pc)
	if err != nil || cu == nil {
		return "", false
	}
	lr, err := d.LineReader(cu)
	if err != nil || lr == nil {
		return "", false
	}
	var prev, e dwarf.LineEntry
	have := false
	for lr.Next(&e) == nil {
		if have && !prev.EndSequence && prev.Address <= pc && pc < e.Address && prev.File != nil {
			return fmt.Sprintf("%s:%d", filepath.Join(filepath.Base(filepath.Dir(prev.File.Name)), filepath.Base(prev.File.Name)), prev.Line), true
		}
		prev, have = e, true
	}
	return "", false
}
