package heap

import (
	"errors"
	"testing"

	"github.com/shmrun/shmrun/shm"
)

// Blocks in use keep their memory; a held block cannot be freed; freeing
// everything coalesces the arenas back to one and gives big blocks back.
func TestAllocFreeHold(t *testing.T) {
	blocks0, maps0 := Stats()
	var bs [][]byte
	for i := range 100 {
		b, err := Alloc(1000+i*100, 64)
		if err != nil {
			t.Fatal(err)
		}
		b[0], b[len(b)-1] = byte(i), byte(i)
		bs = append(bs, b)
	}
	big, err := Alloc(BigBlock, 64)
	if err != nil {
		t.Fatal(err)
	}
	loc, h, ok := Acquire(bs[7][10:20])
	if !ok || loc.Off%64 != 10 || len(loc.Mem) != ArenaSize || loc.FD < 0 {
		t.Fatalf("Acquire of a block's middle: %+v, %v", loc, ok)
	}
	if err := Free(bs[7]); !errors.Is(err, ErrInUse) {
		t.Fatalf("Free of a held block = %v, want ErrInUse", err)
	}
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	if err := h.Release(); err != nil { // twice is a no-op
		t.Fatal(err)
	}
	for i, b := range bs {
		if b[0] != byte(i) || b[len(b)-1] != byte(i) {
			t.Fatalf("block %d was overwritten", i)
		}
		if err := Free(b); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, ok := Acquire(make([]byte, 8)); ok {
		t.Error("Acquire found Go memory in the registry")
	}
	if err := Free(big); err != nil {
		t.Fatal(err)
	}
	blocks, maps := Stats()
	if blocks != blocks0 || maps > max(maps0, 1) {
		t.Errorf("after freeing everything: %d blocks, %d mappings (before: %d, %d)", blocks, maps, blocks0, maps0)
	}
}

// A registered mapping that a window holds stays mapped after Unregister,
// until the hold is released.
func TestUnregisterHeld(t *testing.T) {
	obj, err := shm.NewMemfd("test", shm.PageSize, false)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := obj.Map(shm.PageSize)
	if err != nil {
		t.Fatal(err)
	}
	id, err := Register(mem, obj)
	if err != nil {
		t.Fatal(err)
	}
	_, h, ok := Acquire(mem[100:200])
	if !ok {
		t.Fatal("a registered mapping was not found")
	}
	if err := Unregister(id); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := Acquire(mem[100:200]); ok {
		t.Error("Acquire found an unregistered mapping")
	}
	mem[150] = 7 // still mapped
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	if err := Unregister(id); err == nil {
		t.Error("a second Unregister succeeded")
	}
}
