package shm

import (
	"fmt"
	"math"
	"sync"

	"github.com/shmrun/shmrun/internal/raw"

	"golang.org/x/sys/unix"
)

// Map maps length bytes of the object shared and read-write. The returned
// slice is valid until Unmap. (We call mmap through x/sys rather than
// mmap-go: we map memfds and need MAP_SHARED on raw descriptors and madvise.)
func (o *Object) Map(length int64) ([]byte, error) {
	if length <= 0 {
		return nil, fmt.Errorf("shm: map %s: length %d", o.describe(), length)
	}
	b, err := unix.Mmap(o.fd, 0, int(length), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("shm: map %d bytes of %s: %w", length, o.describe(), err)
	}
	return b, nil
}

// MapAligned is Map at an address that is a multiple of align (a power of
// two; a page or less is what Map gives anyway). It reserves length+align
// bytes of address space, maps the object over the aligned part of it
// (MAP_FIXED) and gives back the rest; Unmap releases the mapping.
func (o *Object) MapAligned(length, align int64) ([]byte, error) {
	if align <= PageSize {
		return o.Map(length)
	}
	if length <= 0 || align&(align-1) != 0 || length > math.MaxInt64-align {
		return nil, fmt.Errorf("shm: map %s: length %d aligned to %d", o.describe(), length, align)
	}
	res, _, errno := unix.Syscall6(unix.SYS_MMAP, 0, uintptr(length+align), unix.PROT_NONE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE, ^uintptr(0), 0)
	if errno != 0 {
		return nil, fmt.Errorf("shm: reserve %d bytes of address space for %s: %w", length+align, o.describe(), errno)
	}
	at := (res + uintptr(align) - 1) &^ (uintptr(align) - 1)
	p, _, errno := unix.Syscall6(unix.SYS_MMAP, at, uintptr(length), unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_SHARED|unix.MAP_FIXED, uintptr(o.fd), 0)
	if errno != 0 {
		unix.Syscall(unix.SYS_MUNMAP, res, uintptr(length+align), 0)
		return nil, fmt.Errorf("shm: map %d bytes of %s at a multiple of %d: %w", length, o.describe(), align, errno)
	}
	// Give back the reservation around the mapping (whose last page is
	// whole whatever length is).
	if at > res {
		unix.Syscall(unix.SYS_MUNMAP, res, at-res, 0)
	}
	mapped := (uintptr(length) + uintptr(PageSize) - 1) &^ (uintptr(PageSize) - 1)
	if end := res + uintptr(length+align); end > at+mapped {
		unix.Syscall(unix.SYS_MUNMAP, at+mapped, end-at-mapped, 0)
	}
	aligned.Lock()
	aligned.m[p] = uintptr(length)
	aligned.Unlock()
	return raw.At(p, int(length)), nil
}

// aligned records MapAligned's mappings (address to length), which the
// x/sys mmap bookkeeping Unmap otherwise goes through does not know.
var aligned = struct {
	sync.Mutex
	m map[uintptr]uintptr
}{m: map[uintptr]uintptr{}}

// AdviseHuge asks the kernel to back the mapping with huge pages where the
// filesystem allows it (tmpfs mounted with huge=advise or within_size).
func AdviseHuge(m []byte) error {
	return unix.Madvise(m, unix.MADV_HUGEPAGE)
}

// Unmap releases a mapping made by Map or MapAligned. Every slice and
// word pointer into it is dead afterwards. Unmapping nil is a no-op.
func Unmap(m []byte) error {
	if m == nil {
		return nil
	}
	a := raw.Addr(m)
	aligned.Lock()
	n, ok := aligned.m[a]
	if ok && n == uintptr(len(m)) {
		delete(aligned.m, a)
	}
	aligned.Unlock()
	if !ok || n != uintptr(len(m)) {
		return unix.Munmap(m)
	}
	if _, _, errno := unix.Syscall(unix.SYS_MUNMAP, a, n, 0); errno != 0 {
		return errno
	}
	return nil
}
