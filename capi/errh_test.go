//go:build !mpi && cgo

package main

import (
	"errors"
	"testing"
)

// TestErrhandlerTable: a program's error handler stays in the table while
// the program holds a handle to it or an object uses it, and goes when
// neither does (MPI_Errhandler_free with no object left, or the last
// object's free after it); a handle of a handler gone, or one the program
// freed, is MPI_ERR_ERRHANDLER. The objects here are two communicator
// handler fields as shmCommSetErrhandler, MPI_Comm_dup (newComm) and
// shmCommFree use them.
func TestErrhandlerTable(t *testing.T) {
	live := func() int {
		tab.RLock()
		defer tab.RUnlock()
		return len(tab.errhs)
	}
	n0 := live()
	set := func(eh uintptr, field *uintptr) error {
		tab.Lock()
		defer tab.Unlock()
		return errhSet(eh, errhComm, field)
	}
	stale := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, errErrhandler) {
			t.Errorf("%s: %v, want MPI_ERR_ERRHANDLER", what, err)
		}
	}

	// Freed with no object using it: gone at once.
	eh := errhNew(1, errhComm)
	if live() != n0+1 {
		t.Fatalf("after create: %d handlers, want %d", live(), n0+1)
	}
	if err := errhFree(eh); err != nil {
		t.Fatal(err)
	}
	if live() != n0 {
		t.Fatalf("freed, unused: %d handlers, want %d", live(), n0)
	}
	stale("freeing it again", errhFree(eh))
	var a uintptr = hErrorsAreFatal
	stale("setting it", set(eh, &a))

	// Set on a communicator, inherited by its dup, freed: it stays until
	// both communicators are gone.
	eh = errhNew(1, errhComm)
	b := uintptr(hErrorsReturn)
	if err := set(eh, &a); err != nil {
		t.Fatal(err)
	}
	tab.Lock()
	errhRetain(a) // MPI_Comm_dup of a's communicator
	tab.Unlock()
	if err := errhFree(eh); err != nil {
		t.Fatal(err)
	}
	if _, ok := get(tab.errhs, eh); !ok {
		t.Fatal("freed while two communicators use it: gone")
	}
	stale("setting a freed handle in use", set(eh, &b))
	stale("freeing a freed handle in use", errhFree(eh))
	if b != hErrorsReturn {
		t.Fatalf("a refused set changed the handler to %#x", b)
	}
	// MPI_Comm_get_errhandler: a new handle the program frees.
	tab.Lock()
	got := errhGet(&a)
	tab.Unlock()
	if got != eh {
		t.Fatalf("get: %#x, want %#x", got, eh)
	}
	if err := set(got, &b); err != nil {
		t.Fatalf("setting the handle get returned: %v", err)
	}
	if err := errhFree(got); err != nil {
		t.Fatal(err)
	}
	if err := set(hErrorsReturn, &b); err != nil { // b lets go of it
		t.Fatal(err)
	}
	releaseErrh(&a) // the first communicator's free
	if _, ok := get(tab.errhs, eh); !ok {
		t.Fatal("gone while the dup still uses it")
	}
	releaseErrh(&a) // the dup's (same handler)
	if live() != n0 {
		t.Fatalf("after the last communicator's free: %d handlers, want %d", live(), n0)
	}
	stale("setting it after", set(eh, &b))

	// A window handler on a communicator is the wrong kind; the
	// predefined handlers are never in the table and never go.
	w := errhNew(1, errhWin)
	stale("a window handler on a communicator", set(w, &b))
	if err := errhFree(w); err != nil {
		t.Fatal(err)
	}
	for _, p := range []uintptr{hErrorsAreFatal, hErrorsAbort, hErrorsReturn} {
		if err := errhFree(p); err != nil {
			t.Errorf("freeing predefined %#x: %v", p, err)
		}
		if err := set(p, &b); err != nil {
			t.Errorf("setting predefined %#x after its free: %v", p, err)
		}
	}
	stale("MPI_ERRHANDLER_NULL", set(hErrhandlerNull, &b))
	if live() != n0 {
		t.Fatalf("at the end: %d handlers, want %d", live(), n0)
	}
}
