package win

import "github.com/shmrun/shmrun/dtype"

// elemOffsets returns the offset, from lo, of the first data byte of each
// of the n elements of basic that count instances of t hold, in type-map
// order. An element's data may span runs (the pair types have gaps).
func elemOffsets(t *dtype.Type, count int, basic *dtype.Type, n int, lo int64) []int64 {
	it, _ := t.Iter(count)
	ds := basic.Size()
	offs := make([]int64, 0, n)
	var off, left int64
	for range n {
		need, start := ds, int64(-1)
		for need > 0 {
			if left == 0 {
				var ok bool
				if off, left, ok = it.Next(); !ok {
					return offs
				}
			}
			if start < 0 {
				start = off
			}
			m := min(need, left)
			off, left, need = off+m, left-m, need-m
		}
		offs = append(offs, start-lo)
	}
	return offs
}
