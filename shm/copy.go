package shm

import (
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/shmrun/shmrun/internal/raw"
)

// Bulk copies between a window and private memory (Put, Get).
//
// Go's memmove on amd64 copies with 32-byte vector loads and stores and
// switches to non-temporal stores at 1 MiB: the data bypasses the caches and
// goes to DRAM. That is right for copies larger than the last-level cache,
// wrong below it: while source and destination fit in the cache, cached
// stores are faster, and the target of a Put usually reads the data soon,
// which cached stores leave in the shared last-level cache. So, without ERMS,
// copies from 1 MiB up to cachedCopyMax go to memmove in pieces of copyPiece.
//
// On CPUs with fast string moves (ERMS), REP MOVSB beats both at every size
// from copyRepMin up, as glibc's memcpy knows. Its start-up cost makes it no faster below copyRepMin (and slower for a few
// KiB), and with source and destination misaligned to each other it only
// ties memmove. So there every copy from copyRepMin up goes in REP MOVSB
// pieces of copyPiece (a piece bounds the time the goroutine cannot be
// preempted), whatever its size. bench/NOTES.md has the measurements behind
// these thresholds.

// copyRepMin is the smallest copy done with REP MOVSB.
const copyRepMin = 16 << 10

const copyPiece = 512 << 10

// cachedCopyMax is the largest copy done with cached stores: an eighth of the
// last-level cache (so source and destination stay well inside it), 4 MiB if
// sysfs does not say, and 0 (never split) where memmove does not switch.
var cachedCopyMax = func() int {
	if runtime.GOARCH != "amd64" {
		return 0
	}
	if n := lastLevelCache(); n > 0 {
		return n / 8
	}
	return 4 << 20
}()

// lastLevelCache returns the size in bytes of cpu0's highest cache level
// from sysfs, or 0.
func lastLevelCache() int {
	best, size := 0, 0
	for i := range 8 {
		dir := "/sys/devices/system/cpu/cpu0/cache/index" + strconv.Itoa(i) + "/"
		lv, err1 := os.ReadFile(dir + "level")
		sz, err2 := os.ReadFile(dir + "size")
		if err1 != nil || err2 != nil {
			continue
		}
		l, err1 := strconv.Atoi(strings.TrimSpace(string(lv)))
		s, err2 := parseCacheSize(strings.TrimSpace(string(sz)))
		if err1 == nil && err2 == nil && l >= best {
			best, size = l, s
		}
	}
	return size
}

// parseCacheSize parses sysfs cache sizes such as "32768K" or "2M".
func parseCacheSize(s string) (int, error) {
	mul := 1
	switch {
	case strings.HasSuffix(s, "K"):
		mul, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mul, s = 1<<20, strings.TrimSuffix(s, "M")
	}
	n, err := strconv.Atoi(s)
	return n * mul, err
}

// Copy is copy(dst, src) for bulk transfers to or from a window: the same
// result (overlapping ranges included), with the store strategy chosen for
// the size and the CPU (see above).
func Copy(dst, src []byte) int {
	n := min(len(dst), len(src))
	if n < copyRepMin || (!useRep && (n < 1<<20 || n > cachedCopyMax)) || overlap(dst[:n], src[:n]) {
		return copy(dst, src) // memmove: it also picks the direction for overlapping ranges
	}
	for off := 0; off < n; off += copyPiece {
		end := min(off+copyPiece, n)
		copyCached(dst[off:end], src[off:end])
	}
	return n
}

// CopyRun is copy(dst, src) for one run of a strided transfer, a few
// bytes to a few KiB (a row of a sub-block, a struct's fields): 32-byte
// AVX2 moves from 256 bytes up where the CPU has them and the ranges do not
// overlap (Go's memmove moves 16 bytes at a time there: a 64-row
// 512-byte sub-block copied 8% faster on an AMD EPYC Zen 5 guest), Copy
// from 4 KiB up, copy otherwise.
func CopyRun(dst, src []byte) int {
	n := min(len(dst), len(src))
	switch {
	case n >= 4096:
		return Copy(dst, src)
	case n < 256 || !useVec || overlap(dst[:n], src[:n]):
		return copy(dst, src)
	}
	copyVec(&dst[0], &src[0], uintptr(n))
	return n
}

// overlap reports whether two non-empty byte ranges share memory.
func overlap(a, b []byte) bool {
	return raw.Addr(a) < raw.Addr(b)+uintptr(len(b)) && raw.Addr(b) < raw.Addr(a)+uintptr(len(a))
}
