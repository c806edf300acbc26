//go:build !mpi

package comm

// fifo is a matching queue (posted receives, unexpected messages): items
// in arrival order, searched from the oldest, and most often taken from
// the front. Taking item i moves the i items before it, not the ones
// after: a window of 64 receives matched in order costs one store each,
// where deleting from a slice moved the 63 behind it (with the garbage
// collector's write barrier on every pointer while it marks).
type fifo[T any] struct {
	items []T
	head  int // items[:head] are taken (zero)
}

// all is the queue, oldest first; index it for take.
func (q *fifo[T]) all() []T { return q.items[q.head:] }

// push appends x, reusing the room taken items left at the front once
// the slice is full.
func (q *fifo[T]) push(x T) {
	if len(q.items) == cap(q.items) && q.head > 0 {
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	q.items = append(q.items, x)
}

// take removes all()[i].
func (q *fifo[T]) take(i int) {
	var zero T
	h := q.head
	copy(q.items[h+1:h+i+1], q.items[h:h+i])
	q.items[h] = zero
	if q.head = h + 1; q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
}

// keep removes the items for which f is false, keeping the others' order.
func (q *fifo[T]) keep(f func(T) bool) {
	all := q.all()
	kept := all[:0]
	for _, x := range all {
		if f(x) {
			kept = append(kept, x)
		}
	}
	clear(all[len(kept):])
	q.items = q.items[:q.head+len(kept)]
}

// reset empties the queue.
func (q *fifo[T]) reset() {
	clear(q.items)
	q.items, q.head = q.items[:0], 0
}

// slab hands out zero values of T from arrays of them allocated at
// once: one allocation for a window of requests instead of one each (a
// value kept long keeps its whole array alive).
type slab[T any] struct {
	items []T
	next  int // items[:next] are handed out
}

// take returns a zero T, from a new array of n if the last is used up,
// and whether it made one.
func (b *slab[T]) take(n int) (x *T, fresh bool) {
	if fresh = b.next == len(b.items); fresh {
		b.items, b.next = make([]T, n), 0
	}
	x = &b.items[b.next]
	b.next++
	return x, fresh
}
