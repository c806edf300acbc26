//go:build !mpi

package win_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/win"
)

// handleCall is one exported function or method of package win, called on
// a window handle with harmless arguments. idle is the error class the call
// must give on a live window with no epoch open (nil: it succeeds there and
// undo, if set, puts the window back as it was).
type handleCall struct {
	call  func(w *win.Win) error
	idle  error
	undo  func(w *win.Win) error
	value bool // no error result: a nil or freed window gives the zero value
}

// notHandle marks an exported name that takes no window: it is listed so the
// coverage check knows it was considered.
var notHandle = handleCall{}

// value is a call with no error result: a panic is what the test looks for,
// and the zero values are checked separately.
func value(f func(w *win.Win)) handleCall {
	return handleCall{call: func(w *win.Win) error { f(w); return nil }, value: true}
}

// handleCalls lists every exported function and method of package win.
// TestHandleCallsCoverAPI fails when a new one is missing, so a new call
// cannot forget its nil, freed and epoch checks.
func handleCalls(c *comm.Comm) map[string]handleCall {
	buf8 := func() []byte { return make([]byte, 8) }
	f64t := dtype.Basic(atomics.Float64)
	g := c.Group()
	// checked runs f on a Checked of rank 0's part when the window gives
	// one (a nil or freed window does not: NewChecked's ErrWin).
	checked := func(f func(c win.Checked[int64])) handleCall {
		return value(func(w *win.Win) {
			if c, err := win.NewChecked[int64](w, 0); err == nil && c.Len() > 1 {
				f(c)
			}
		})
	}
	return map[string]handleCall{
		"NewChecked":         {call: func(w *win.Win) error { _, err := win.NewChecked[int64](w, 0); return err }},
		"Checked.Len":        checked(func(c win.Checked[int64]) { _ = c.Len() }),
		"Checked.Load":       checked(func(c win.Checked[int64]) { _ = c.Load(0) }),
		"Checked.Store":      checked(func(c win.Checked[int64]) { c.Store(0, c.Load(0)) }),
		"Checked.LoadSlice":  checked(func(c win.Checked[int64]) { c.LoadSlice(make([]int64, 2), 0) }),
		"Checked.StoreSlice": checked(func(c win.Checked[int64]) { c.StoreSlice(0, []int64{c.Load(0), c.Load(1)}) }),
		"AllocateShared":     notHandle,
		"Allocate":           notHandle,
		"Create":             notHandle, // on bad communicators below
		"CreateDynamic":      notHandle,
		"View":               notHandle, // works on slices, never on a handle
		"Flavor.String":      notHandle,
		"Model.String":       notHandle,
		"LockType.String":    notHandle,
		"Request.Wait":       notHandle, // a request is complete when returned
		"Request.Test":       notHandle,

		"Win.Put":  {call: func(w *win.Win) error { return w.Put(buf8(), 0, 0) }, idle: win.ErrRMASync},
		"Win.Get":  {call: func(w *win.Win) error { return w.Get(buf8(), 0, 0) }, idle: win.ErrRMASync},
		"Win.Rput": {call: func(w *win.Win) error { _, err := w.Rput(buf8(), 0, 0); return err }, idle: win.ErrRMASync},
		"Win.Rget": {call: func(w *win.Win) error { _, err := w.Rget(buf8(), 0, 0); return err }, idle: win.ErrRMASync},
		"PutT":     {call: func(w *win.Win) error { return win.PutT(w, []int64{1}, 0, 0) }, idle: win.ErrRMASync},
		"PutType":  {call: func(w *win.Win) error { return win.PutType(w, buf8(), 1, f64t, 0, 0, 1, f64t) }, idle: win.ErrRMASync},
		"GetType":  {call: func(w *win.Win) error { return win.GetType(w, buf8(), 1, f64t, 0, 0, 1, f64t) }, idle: win.ErrRMASync},
		"AccumulateType": {call: func(w *win.Win) error {
			return win.AccumulateType(w, buf8(), 1, f64t, 0, 0, 1, f64t, atomics.Sum)
		}, idle: win.ErrRMASync},
		"GetAccumulateType": {call: func(w *win.Win) error {
			return win.GetAccumulateType(w, buf8(), 1, f64t, buf8(), 1, f64t, 0, 0, 1, f64t, atomics.Sum)
		}, idle: win.ErrRMASync},
		"GetT": {call: func(w *win.Win) error { return win.GetT(w, []int64{1}, 0, 0) }, idle: win.ErrRMASync},
		"Accumulate": {call: func(w *win.Win) error {
			return win.Accumulate(w, []int64{1}, 0, 0, atomics.Sum)
		}, idle: win.ErrRMASync},
		"GetAccumulate": {call: func(w *win.Win) error {
			return win.GetAccumulate(w, []int64{1}, []int64{0}, 0, 0, atomics.Sum)
		}, idle: win.ErrRMASync},
		"FetchAndOp": {call: func(w *win.Win) error {
			_, err := win.FetchAndOp(w, int64(1), 0, 0, atomics.Sum)
			return err
		}, idle: win.ErrRMASync},
		"CompareAndSwap": {call: func(w *win.Win) error {
			_, err := win.CompareAndSwap(w, int64(1), 0, 0, 0)
			return err
		}, idle: win.ErrRMASync},
		"Raccumulate": {call: func(w *win.Win) error {
			_, err := win.Raccumulate(w, []int64{1}, 0, 0, atomics.Sum)
			return err
		}, idle: win.ErrRMASync},
		"RgetAccumulate": {call: func(w *win.Win) error {
			_, err := win.RgetAccumulate(w, []int64{1}, []int64{0}, 0, 0, atomics.Sum)
			return err
		}, idle: win.ErrRMASync},

		"Win.Flush":         {call: func(w *win.Win) error { return w.Flush(0) }, idle: win.ErrRMASync},
		"Win.FlushAll":      {call: func(w *win.Win) error { return w.FlushAll() }, idle: win.ErrRMASync},
		"Win.FlushLocal":    {call: func(w *win.Win) error { return w.FlushLocal(0) }, idle: win.ErrRMASync},
		"Win.FlushLocalAll": {call: func(w *win.Win) error { return w.FlushLocalAll() }, idle: win.ErrRMASync},
		"Win.Sync":          {call: func(w *win.Win) error { return w.Sync() }, idle: win.ErrRMASync},
		"Win.Unlock":        {call: func(w *win.Win) error { return w.Unlock(0) }, idle: win.ErrRMASync},
		"Win.UnlockAll":     {call: func(w *win.Win) error { return w.UnlockAll() }, idle: win.ErrRMASync},
		"Win.Complete":      {call: func(w *win.Win) error { return w.Complete() }, idle: win.ErrRMASync},
		"Win.Wait":          {call: func(w *win.Win) error { return w.Wait() }, idle: win.ErrRMASync},
		"Win.Test":          {call: func(w *win.Win) error { _, err := w.Test(); return err }, idle: win.ErrRMASync},

		"Win.Lock": {call: func(w *win.Win) error { return w.Lock(win.Exclusive, 0, 0) },
			undo: func(w *win.Win) error { return w.Unlock(0) }},
		"Win.LockAll": {call: func(w *win.Win) error { return w.LockAll(0) },
			undo: func(w *win.Win) error { return w.UnlockAll() }},
		"Win.Fence": {call: func(w *win.Win) error { return w.Fence(0) },
			undo: func(w *win.Win) error { return w.Fence(win.ModeNoSucceed) }},
		"Win.Post": {call: func(w *win.Win) error { return w.Post(g, 0) },
			undo: func(w *win.Win) error {
				// The group is this rank alone: its own Start and Complete
				// let Wait return.
				if err := w.Start(g, 0); err != nil {
					return err
				}
				if err := w.Complete(); err != nil {
					return err
				}
				return w.Wait()
			}},
		"Win.Start": {call: func(w *win.Win) error {
			if err := w.Post(g, 0); err != nil {
				return err
			}
			return w.Start(g, 0)
		}, undo: func(w *win.Win) error {
			if err := w.Complete(); err != nil {
				return err
			}
			return w.Wait()
		}},
		"Placement":       {call: func(w *win.Win) error { _, err := win.Placement(w); return err }},
		"Win.SharedQuery": {call: func(w *win.Win) error { _, err := w.SharedQuery(0); return err }},
		"Win.Free":        {call: func(w *win.Win) error { return w.Free() }, idle: errFreeLast},
		"Win.Attach":      {call: func(w *win.Win) error { return w.Attach(buf8()) }, idle: win.ErrRMAFlavor},
		"Win.Detach":      {call: func(w *win.Win) error { return w.Detach(buf8()) }, idle: win.ErrRMAFlavor},

		"Win.Attr":  value(func(w *win.Win) { _ = w.Attr() }),
		"Win.Info":  value(func(w *win.Win) { _ = w.Info() }),
		"Win.Local": value(func(w *win.Win) { _ = w.Local() }),
		"Win.Size":  value(func(w *win.Win) { _ = w.Size() }),
		"Win.Rank":  value(func(w *win.Win) { _ = w.Rank() }),
		"Win.Group": value(func(w *win.Win) { _ = w.Group() }),
	}
}

// errFreeLast marks Free, which the idle pass runs last, on its own.
var errFreeLast = errors.New("win.Free runs last")

func TestHandleCallsCoverAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks package win from source")
	}
	ranktest.CheckCovers(t, ".", slices.Collect(maps.Keys(handleCalls(oneRank(t)))))
}

// noPanic runs f and turns a panic into an error naming it.
func noPanic(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return f()
}

// Every call on a nil window, a freed window and a zero Win returns
// ErrWin (or, with no error result, a zero value), never panics (but a
// zero Win's Flush); on a live window with no
// epoch open every call gives its documented class.
func TestHandleCalls(t *testing.T) {
	c := oneRank(t)
	calls := handleCalls(c)
	live, err := win.AllocateShared(c, 64, 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	freed, err := win.AllocateShared(c, 64, 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := freed.Free(); err != nil {
		t.Fatal(err)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range calls {
			if !yield(n) {
				return
			}
		}
	})
	for _, name := range names {
		hc := calls[name]
		if hc.call == nil {
			continue
		}
		for _, tc := range []struct {
			what string
			w    *win.Win
		}{{"nil", nil}, {"freed", freed}, {"zero", new(win.Win)}} {
			if tc.what == "zero" && name == "Win.Flush" {
				continue // its one-compare fast path panics there (Win's documentation)
			}
			err := noPanic(func() error { return hc.call(tc.w) })
			switch {
			case err != nil && strings.HasPrefix(err.Error(), "panic"):
				t.Errorf("%s on a %s window: %v", name, tc.what, err)
			case hc.value:
				// No error result: a zero value, checked below.
			case !errors.Is(err, win.ErrWin):
				t.Errorf("%s on a %s window = %v, want ErrWin", name, tc.what, err)
			}
		}
		if hc.idle == errFreeLast {
			continue
		}
		err := noPanic(func() error { return hc.call(live) })
		switch {
		case hc.idle == nil && err != nil:
			t.Errorf("%s on an idle window: %v", name, err)
		case hc.idle != nil && !errors.Is(err, hc.idle):
			t.Errorf("%s on an idle window = %v, want %v", name, err, hc.idle)
		}
		if hc.undo != nil && err == nil {
			if err := hc.undo(live); err != nil {
				t.Fatalf("undoing %s: %v", name, err)
			}
		}
	}
	for _, w := range []*win.Win{nil, freed, new(win.Win)} {
		if a := w.Attr(); a.Base != nil || a.Size != 0 || a.DispUnit != 0 || a.Flavor != 0 || a.Model != 0 {
			t.Errorf("Attr of a nil or freed window = %+v, want the zero Attr", a)
		}
		if w.Local() != nil || w.Info() != nil || w.Size() != 0 || w.Rank() != 0 || w.Group() != nil {
			t.Errorf("a nil or freed window's Local, Info, Size, Rank or Group is not the zero value")
		}
	}
	// Constructors on a nil, zero or finalized communicator fail at once
	// (a finalized one used to be accepted, and hang the job when only one
	// rank called).
	done, err := comm.NewLocalWorld(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := done[0].Finalize(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what string
		c    *comm.Comm
		want error
	}{{"nil", nil, comm.ErrComm}, {"zero", &comm.Comm{}, comm.ErrComm}, {"finalized", done[0], comm.ErrFinalized}} {
		for name, alloc := range map[string]func(*comm.Comm, int, int, win.Info) (*win.Win, error){
			"AllocateShared": win.AllocateShared, "Allocate": win.Allocate,
			"Create": func(c *comm.Comm, n, u int, in win.Info) (*win.Win, error) {
				return win.Create(c, make([]byte, n), u, in)
			},
			"CreateDynamic": func(c *comm.Comm, _, _ int, in win.Info) (*win.Win, error) { return win.CreateDynamic(c, in) }} {
			if w, err := alloc(tc.c, 8, 1, nil); w != nil || !errors.Is(err, tc.want) {
				t.Errorf("%s on a %s communicator = %v, %v; want nil, %v", name, tc.what, w, err, tc.want)
			}
		}
	}
	if err := live.Free(); err != nil {
		t.Fatal(err)
	}
	if err := live.Free(); !errors.Is(err, win.ErrWin) {
		t.Errorf("second Free = %v, want ErrWin", err)
	}
}

// oneRank is a world of one goroutine rank, finalized when the test ends.
func oneRank(t *testing.T) *comm.Comm {
	t.Helper()
	cs, err := comm.NewLocalWorld(1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs[0].Finalize() })
	return cs[0]
}

// TestBufferRules: GetAccumulate's origin and result may not share memory
// (MPI 4.1 §12.3.4: ErrBuffer, nothing done; one element may), a Put's
// target entries may not overlap (§12.3.1, a receive's rule: ErrType),
// and a negative count is ErrCount, on every window flavor's path.
func TestBufferRules(t *testing.T) {
	c := oneRank(t)
	i64 := dtype.Basic(atomics.Int64)
	for _, mk := range []struct {
		name string
		make func() (*win.Win, error)
	}{
		{"Allocate", func() (*win.Win, error) { return win.Allocate(c, 64, 8, nil) }},
		{"Create over private memory", func() (*win.Win, error) { return win.Create(c, make([]byte, 64), 8, nil) }},
	} {
		w, err := mk.make()
		if err != nil {
			t.Fatal(err)
		}
		if err := w.LockAll(0); err != nil {
			t.Fatal(err)
		}
		if err := win.PutT(w, []int64{10, 20, 30, 40}, 0, 0); err != nil {
			t.Fatal(err)
		}
		b := []int64{1, 2, 3, 4, 0}
		if err := win.GetAccumulate(w, b[:4], b[:4], 0, 0, atomics.Sum); !errors.Is(err, win.ErrBuffer) {
			t.Errorf("%s: GetAccumulate of one buffer = %v, want ErrBuffer", mk.name, err)
		}
		if err := win.GetAccumulate(w, b[:4], b[1:], 0, 0, atomics.Sum); !errors.Is(err, win.ErrBuffer) {
			t.Errorf("%s: GetAccumulate of overlapping buffers = %v, want ErrBuffer", mk.name, err)
		}
		got := make([]int64, 4)
		if err := win.GetT(w, got, 0, 0); err != nil || !slices.Equal(got, []int64{10, 20, 30, 40}) {
			t.Errorf("%s: the target after refused GetAccumulates: %v %v", mk.name, got, err)
		}
		one := []int64{5}
		if err := win.GetAccumulate(w, one, one, 0, 0, atomics.Sum); err != nil || one[0] != 10 {
			t.Errorf("%s: GetAccumulate of one element in place = %v %v, want 10", mk.name, one, err)
		}
		origin := make([]byte, 40)
		if err := win.GetAccumulateType(w, origin[:32], 4, i64, origin[8:], 4, i64, 0, 0, 4, i64, atomics.Sum); !errors.Is(err, win.ErrBuffer) {
			t.Errorf("%s: GetAccumulateType of overlapping runs = %v, want ErrBuffer", mk.name, err)
		}
		same := make([]byte, 32)
		if err := win.GetAccumulateType(w, same, 4, i64, same, 4, i64, 0, 0, 4, i64, atomics.Sum); !errors.Is(err, win.ErrBuffer) {
			t.Errorf("%s: GetAccumulateType of one buffer = %v, want ErrBuffer", mk.name, err)
		}
		stride0, err := dtype.Vector(4, 1, 0, i64)
		if err == nil {
			err = stride0.Commit()
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := win.PutType(w, make([]byte, 32), 4, i64, 0, 0, 1, stride0); !errors.Is(err, win.ErrType) {
			t.Errorf("%s: PutType into overlapping target entries = %v, want ErrType", mk.name, err)
		}
		if err := win.PutType(w, make([]byte, 8), 1, i64, 0, 0, -1, i64); !errors.Is(err, win.ErrCount) {
			t.Errorf("%s: PutType with a target count of -1 = %v, want ErrCount", mk.name, err)
		}
		if err := w.UnlockAll(); err != nil {
			t.Fatal(err)
		}
		if err := w.Free(); err != nil {
			t.Fatal(err)
		}
	}
}
