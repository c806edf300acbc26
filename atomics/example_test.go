package atomics_test

import (
	"errors"
	"fmt"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/shm"
)

// A shared counter: FetchAndOp(Sum) hands out tickets. Here the "segment" is
// heap memory; in a window it is the mapped segment and off the target's
// displacement plus its data offset.
func ExampleFetchAndOp() {
	mem := shm.Bytes(make([]uint64, 8)) // 64 bytes, 8-byte aligned like a mapping
	for range 3 {
		ticket, err := atomics.FetchAndOp(mem, 16, int64(1), atomics.Sum, nil)
		fmt.Println(ticket, err)
	}
	// Output:
	// 0 <nil>
	// 1 <nil>
	// 2 <nil>
}

// MinLoc on pair types: ties keep the lower index. Pair types are updated
// under a lock stripe, so the segment's stripes are passed.
func ExampleAccumulate_minLoc() {
	mem := shm.Bytes(make([]uint64, 8))
	stripes, _ := atomics.NewStripes(shm.Bytes(make([]uint64, atomics.StripeLen/8)), nil, barrier.DefaultPolicy)
	_ = atomics.Accumulate(mem, 0, []atomics.DoubleInt{{V: 2.5, I: 7}}, atomics.Replace, stripes)
	_ = atomics.Accumulate(mem, 0, []atomics.DoubleInt{{V: 2.5, I: 3}}, atomics.MinLoc, stripes)
	_ = atomics.Accumulate(mem, 0, []atomics.DoubleInt{{V: 9, I: 1}}, atomics.MinLoc, stripes)
	old, _ := atomics.FetchAndOp(mem, 0, atomics.DoubleInt{}, atomics.NoOp, stripes)
	fmt.Printf("%+v\n", old)
	// Output: {V:2.5 I:3}
}

// Check applies the standard's op/type table.
func ExampleCheck() {
	err := atomics.Check(atomics.Band, atomics.Float64, false)
	fmt.Println(err)
	fmt.Println(errors.Is(err, atomics.ErrOp))
	fmt.Println(atomics.Check(atomics.NoOp, atomics.TypeOf[int32](), true))
	// Output:
	// atomics: MPI_BAND is not defined on MPI_DOUBLE
	// true
	// <nil>
}

// CompareAndSwap as a lock word: 0 is free, rank+1 holds it.
func ExampleCompareAndSwap() {
	mem := shm.Bytes(make([]uint64, 1))
	old, _ := atomics.CompareAndSwap(mem, 4, uint32(3), 0, nil) // rank 2 takes it
	fmt.Println("rank 2 saw", old)
	old, _ = atomics.CompareAndSwap(mem, 4, uint32(5), 0, nil) // rank 4 fails
	fmt.Println("rank 4 saw", old)
	// Output:
	// rank 2 saw 0
	// rank 4 saw 3
}
