package shm

import (
	"fmt"

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

// AdviseHuge asks the kernel to back the mapping with huge pages where the
// filesystem allows it (tmpfs mounted with huge=advise or within_size).
func AdviseHuge(m []byte) error {
	return unix.Madvise(m, unix.MADV_HUGEPAGE)
}

// Unmap releases a mapping made by Map. Every slice and word pointer into it
// is dead afterwards. Unmapping nil is a no-op.
func Unmap(m []byte) error {
	if m == nil {
		return nil
	}
	return unix.Munmap(m)
}
