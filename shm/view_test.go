package shm_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/shmrun/shmrun/shm"
)

// viewErr tries shm.View[T] on b and returns its error.
func viewErr[T any](b []byte) error {
	_, err := shm.View[T](b)
	return err
}

type pod struct {
	A int32
	B [3]uint16
	C float64
}

type withPointer struct {
	A int64
	P *int64
}

func TestViewRefusesPointerTypes(t *testing.T) {
	b := make([]byte, 64)
	for name, err := range map[string]error{
		"*int":                  viewErr[*int](b),
		"string":                viewErr[string](b),
		"[]byte":                viewErr[[]byte](b),
		"map":                   viewErr[map[int]int](b),
		"chan":                  viewErr[chan int](b),
		"func":                  viewErr[func()](b),
		"interface":             viewErr[any](b),
		"struct with a pointer": viewErr[withPointer](b),
		"array of pointers":     viewErr[[2]*int](b),
		"struct{}":              viewErr[struct{}](b),
		"[0]int64":              viewErr[[0]int64](b),
	} {
		if !errors.Is(err, shm.ErrView) {
			t.Errorf("View[%s] = %v, want ErrView", name, err)
		}
	}
}

func TestView(t *testing.T) {
	backing := make([]uint64, 16) // 8-byte aligned
	b := shm.Bytes(backing)
	if len(b) != 128 {
		t.Fatalf("Bytes: %d bytes", len(b))
	}
	tests := []struct {
		name string
		err  error
		len  int
	}{
		{"uint64", viewErr[uint64](b), 16},
		{"uint64 at 8", viewErr[uint64](b[8:]), 15},
		{"uint64 misaligned", viewErr[uint64](b[4:]), -1},
		{"uint64 ragged length", viewErr[uint64](b[:12]), -1},
		{"uint32 at 4", viewErr[uint32](b[4:]), 31},
		{"uint32 misaligned", viewErr[uint32](b[2:]), -1},
		{"uint16 odd length", viewErr[uint16](b[:7]), -1},
		{"int8 anywhere", viewErr[int8](b[3:8]), 5},
		{"complex128", viewErr[complex128](b), 8},
		{"pod", viewErr[pod](b[:2*int(reflect.TypeFor[pod]().Size())]), 2},
		{"array", viewErr[[4]int32](b), 8},
		{"empty", viewErr[uint64](b[:0]), 0},
	}
	for _, tt := range tests {
		switch {
		case tt.len < 0 && !errors.Is(tt.err, shm.ErrView):
			t.Errorf("%s: View = %v, want ErrView", tt.name, tt.err)
		case tt.len >= 0 && tt.err != nil:
			t.Errorf("%s: View: %v", tt.name, tt.err)
		}
	}
	if err := viewErr[uint64](b[4:]); err == nil || !strings.Contains(err.Error(), "8-byte aligned") {
		t.Errorf("the misalignment error does not name the alignment: %v", err)
	}

	v, err := shm.View[uint32](b[4:12])
	if err != nil || len(v) != 2 {
		t.Fatalf("View: %v, %d elements", err, len(v))
	}
	v[1] = 0x01020304
	if b[8] != 4 || b[11] != 1 { // little-endian on every supported platform
		t.Errorf("view does not alias the bytes: % x", b[8:12])
	}
	if e, err := shm.View[uint64](nil); err != nil || len(e) != 0 {
		t.Errorf("View of nil = %v, %v", e, err)
	}
	if shm.Bytes[uint64](nil) != nil {
		t.Error("Bytes of nil is not nil")
	}
}
