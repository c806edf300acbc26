package topo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// MaxCPUs bounds the CPU ids a CPUSet holds. Linux builds for at most 8192
// CPUs (x86 MAXSMP); four times that leaves room and keeps a set read from
// a corrupt file to a few kilobytes.
const MaxCPUs = 1 << 15

// ErrSyntax is wrapped by every parse error of ParseList and ParseMask.
var ErrSyntax = errors.New("bad CPU set syntax")

// CPUSet is an immutable set of CPU ids, as the kernel numbers them. The
// zero value is the empty set. Operations return new sets and never change
// their operands, so a CPUSet may be shared between goroutines.
type CPUSet struct {
	w []uint64 // bit c of w[c/64]; no trailing zero words
}

// NewCPUSet returns the set of the given CPU ids; ids outside [0, MaxCPUs)
// are an error.
func NewCPUSet(cpus ...int) (CPUSet, error) {
	var b builder
	for _, c := range cpus {
		if c < 0 || c >= MaxCPUs {
			return CPUSet{}, fmt.Errorf("topo: CPU %d out of range [0, %d)", c, MaxCPUs)
		}
		b.add(c)
	}
	return b.set(), nil
}

// builder accumulates bits; set trims it into a CPUSet.
type builder struct{ w []uint64 }

func (b *builder) add(c int) {
	i := c / 64
	if len(b.w) <= i {
		b.w = append(b.w, make([]uint64, i+1-len(b.w))...) // one growth, not a word at a time
	}
	b.w[i] |= 1 << (c % 64)
}

func (b *builder) set() CPUSet { return CPUSet{w: trim(b.w)} }

func trim(w []uint64) []uint64 {
	n := len(w)
	for n > 0 && w[n-1] == 0 {
		n--
	}
	if n == 0 {
		return nil
	}
	return w[:n:n]
}

// ParseList parses the kernel's list format, as in cpulist and
// Cpus_allowed_list files: comma-separated ids and inclusive ranges,
// "0-3,8,10-11". Surrounding white space is ignored; an empty string is the
// empty set (sysfs writes that for a node without CPUs).
func ParseList(s string) (CPUSet, error) {
	s = strings.TrimSpace(s)
	var b builder
	if s == "" {
		return CPUSet{}, nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := parseID(lo)
		if err != nil {
			return CPUSet{}, fmt.Errorf("topo: CPU list %q: %w", s, err)
		}
		last := first
		if isRange {
			if last, err = parseID(hi); err != nil {
				return CPUSet{}, fmt.Errorf("topo: CPU list %q: %w", s, err)
			}
			if last < first {
				return CPUSet{}, fmt.Errorf("topo: CPU list %q: range %d-%d runs backwards: %w", s, first, last, ErrSyntax)
			}
		}
		for c := first; c <= last; c++ {
			b.add(c)
		}
	}
	return b.set(), nil
}

func parseID(s string) (int, error) {
	if s == "" || len(s) > 6 {
		return 0, fmt.Errorf("CPU id %q: %w", s, ErrSyntax)
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, fmt.Errorf("CPU id %q: %w", s, ErrSyntax)
		}
	}
	n, _ := strconv.Atoi(s) // at most 6 digits: cannot overflow
	if n >= MaxCPUs {
		return 0, fmt.Errorf("CPU id %d not below %d: %w", n, MaxCPUs, ErrSyntax)
	}
	return n, nil
}

// ParseMask parses the kernel's mask format, as in cpumap and Cpus_allowed
// files: hexadecimal 32-bit words separated by commas, most significant
// first, "ffffffff,00000001". A word has 1 to 8 digits. Surrounding white
// space is ignored; an empty string is the empty set.
func ParseMask(s string) (CPUSet, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return CPUSet{}, nil
	}
	words := strings.Split(s, ",")
	var b builder
	for i, word := range words {
		if word == "" || len(word) > 8 {
			return CPUSet{}, fmt.Errorf("topo: CPU mask %q: word %q is not 1 to 8 hex digits: %w", s, word, ErrSyntax)
		}
		v, err := strconv.ParseUint(word, 16, 32)
		if err != nil || word[0] == '+' || word[0] == '-' {
			return CPUSet{}, fmt.Errorf("topo: CPU mask %q: word %q is not hexadecimal: %w", s, word, ErrSyntax)
		}
		if v == 0 {
			continue
		}
		base := (len(words) - 1 - i) * 32
		if base+bits.Len64(v) > MaxCPUs {
			return CPUSet{}, fmt.Errorf("topo: CPU mask %q: sets a CPU id not below %d: %w", s, MaxCPUs, ErrSyntax)
		}
		for v != 0 {
			bit := bits.TrailingZeros64(v)
			b.add(base + bit)
			v &^= 1 << bit
		}
	}
	return b.set(), nil
}

// String returns the set in list format, "0-3,8,10-11"; the empty set is "".
func (s CPUSet) String() string {
	var sb strings.Builder
	s.ranges(func(lo, hi int) {
		if sb.Len() > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.Itoa(lo))
		if hi > lo {
			sb.WriteByte('-')
			sb.WriteString(strconv.Itoa(hi))
		}
	})
	return sb.String()
}

// Mask returns the set in the kernel's mask format, "ff,00000001"; the empty
// set is "0". Leading zeros of the first word are dropped, as the kernel
// keeps them only to pad to its own CPU count.
func (s CPUSet) Mask() string {
	if len(s.w) == 0 {
		return "0"
	}
	// Written by hand: a Sprintf per word made partition, which takes a
	// key per CPU, quadratic in a slow way (11 s for a corrupt sysfs of
	// 32768 online CPUs, which FuzzRead found).
	const hex = "0123456789abcdef"
	b := make([]byte, 0, len(s.w)*18)
	for i := len(s.w)*2 - 1; i >= 0; i-- {
		v := uint32(s.w[i/2] >> (32 * (i % 2)))
		if len(b) == 0 {
			if v != 0 {
				b = strconv.AppendUint(b, uint64(v), 16)
			}
			continue
		}
		b = append(b, ',')
		for sh := 28; sh >= 0; sh -= 4 {
			b = append(b, hex[v>>sh&15])
		}
	}
	return string(b)
}

// key is a map key for s: its words' bytes, cheaper than Mask's text.
func (s CPUSet) key() string {
	b := make([]byte, 8*len(s.w))
	for i, v := range s.w {
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
	return string(b)
}

// ranges calls f for each maximal run lo..hi of the set, in order.
func (s CPUSet) ranges(f func(lo, hi int)) {
	lo := -1
	prev := -2
	s.each(func(c int) {
		if c != prev+1 {
			if lo >= 0 {
				f(lo, prev)
			}
			lo = c
		}
		prev = c
	})
	if lo >= 0 {
		f(lo, prev)
	}
}

func (s CPUSet) each(f func(c int)) {
	for i, w := range s.w {
		for w != 0 {
			bit := bits.TrailingZeros64(w)
			f(i*64 + bit)
			w &^= 1 << bit
		}
	}
}

// CPUs returns the ids in increasing order.
func (s CPUSet) CPUs() []int {
	out := make([]int, 0, s.Len())
	s.each(func(c int) { out = append(out, c) })
	return out
}

// Len returns the number of CPUs in the set.
func (s CPUSet) Len() int {
	n := 0
	for _, w := range s.w {
		n += bits.OnesCount64(w)
	}
	return n
}

// IsEmpty reports whether the set has no CPU.
func (s CPUSet) IsEmpty() bool { return len(s.w) == 0 }

// First returns the lowest id in the set, or -1 for the empty set.
func (s CPUSet) First() int {
	for i, w := range s.w {
		if w != 0 {
			return i*64 + bits.TrailingZeros64(w)
		}
	}
	return -1
}

// Contains reports whether CPU c is in the set.
func (s CPUSet) Contains(c int) bool {
	if c < 0 || c/64 >= len(s.w) {
		return false
	}
	return s.w[c/64]&(1<<(c%64)) != 0
}

// Equal reports whether s and o hold the same CPUs.
func (s CPUSet) Equal(o CPUSet) bool {
	if len(s.w) != len(o.w) {
		return false
	}
	for i := range s.w {
		if s.w[i] != o.w[i] {
			return false
		}
	}
	return true
}

// SubsetOf reports whether every CPU of s is in o; the empty set is a
// subset of every set.
func (s CPUSet) SubsetOf(o CPUSet) bool {
	for i, w := range s.w {
		var ow uint64
		if i < len(o.w) {
			ow = o.w[i]
		}
		if w&^ow != 0 {
			return false
		}
	}
	return true
}

// Intersects reports whether s and o share a CPU.
func (s CPUSet) Intersects(o CPUSet) bool {
	for i := 0; i < len(s.w) && i < len(o.w); i++ {
		if s.w[i]&o.w[i] != 0 {
			return true
		}
	}
	return false
}

// Union returns s ∪ o.
func (s CPUSet) Union(o CPUSet) CPUSet {
	a, b := s.w, o.w
	if len(a) < len(b) {
		a, b = b, a
	}
	w := append([]uint64(nil), a...)
	for i, v := range b {
		w[i] |= v
	}
	return CPUSet{w: trim(w)}
}

// Intersect returns s ∩ o.
func (s CPUSet) Intersect(o CPUSet) CPUSet {
	n := min(len(s.w), len(o.w))
	w := make([]uint64, n)
	for i := range w {
		w[i] = s.w[i] & o.w[i]
	}
	return CPUSet{w: trim(w)}
}

// Difference returns s \ o.
func (s CPUSet) Difference(o CPUSet) CPUSet {
	w := append([]uint64(nil), s.w...)
	for i := 0; i < len(w) && i < len(o.w); i++ {
		w[i] &^= o.w[i]
	}
	return CPUSet{w: trim(w)}
}
