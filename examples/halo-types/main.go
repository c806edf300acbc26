// Command halo-types runs a 2D Jacobi smoother on a grid split into blocks
// of columns, one block per rank, with derived datatypes doing the
// strided work: each rank's edge columns go to its neighbours' ghost
// columns by c.SendrecvType with a dtype.Vector (one element per row,
// stride a row), and at the end rank 0 gathers the blocks straight into
// the global matrix by comm.GathervType with a resized vector, then checks
// the result against the same smoother run serially.
//
//	go run ./cmd/shmrun -n 4 --oversubscribe ./examples/halo-types
package main

import (
	"fmt"
	"log"
	"math"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/shm"
)

const (
	rows  = 64  // grid rows
	local = 16  // columns per rank
	steps = 100 // Jacobi sweeps
)

func main() {
	world, err := comm.Init()
	if err != nil {
		log.Fatal(err)
	}
	if err := run(world); err != nil {
		log.Fatal(err)
	}
	if err := comm.Finalize(); err != nil {
		log.Fatal(err)
	}
}

// initial is the grid's starting value at row i, global column j.
func initial(i, j int) float64 { return math.Sin(float64(i)*0.1) + math.Cos(float64(j)*0.07) }

// sweep is one Jacobi step on a rows×width row-major grid u into next: the
// columns [lo, hi) and the interior rows are updated, unless fixed(j).
func sweep(u, next []float64, width, lo, hi int, fixed func(j int) bool) {
	copy(next, u)
	for i := 1; i < rows-1; i++ {
		for j := lo; j < hi; j++ {
			if !fixed(j) {
				next[i*width+j] = 0.25 * (u[(i-1)*width+j] + u[(i+1)*width+j] + u[i*width+j-1] + u[i*width+j+1])
			}
		}
	}
}

func commit(t *dtype.Type, err error) (*dtype.Type, error) {
	if err != nil {
		return nil, err
	}
	return t, t.Commit()
}

func run(world *comm.Comm) error {
	rank, size := world.Rank(), world.Size()
	cols, width := local*size, local+2 // global columns; a local row has a ghost column each side
	f64 := dtype.Basic(atomics.Float64)
	// A column of the local grid: one float64 per row, a row apart.
	column, err := commit(dtype.Vector(rows, 1, width, f64))
	if err != nil {
		return err
	}
	u, next := make([]float64, rows*width), make([]float64, rows*width)
	for i := range rows {
		for j := 1; j <= local; j++ {
			u[i*width+j] = initial(i, rank*local+j-1)
		}
	}
	left, right := rank-1, rank+1
	if left < 0 {
		left = comm.ProcNull
	}
	if right == size {
		right = comm.ProcNull
	}
	fixed := func(j int) bool { g := rank*local + j - 1; return g == 0 || g == cols-1 }
	col := func(g []float64, j int) []byte { return shm.Bytes(g[j:]) } // the column starting at row 0, column j
	for range steps {
		// My first column to the left's right ghost, my last to the right's left ghost.
		if _, err := world.SendrecvType(col(u, 1), 1, column, left, 0, col(u, local+1), 1, column, right, 0); err != nil {
			return err
		}
		if _, err := world.SendrecvType(col(u, local), 1, column, right, 1, col(u, 0), 1, column, left, 1); err != nil {
			return err
		}
		sweep(u, next, width, 1, local+1, fixed)
		u, next = next, u
	}

	// Gather: my block (the interior columns) straight into rank 0's global
	// matrix, where block q starts at column q·local. The receive type is
	// local float64 a row, rows times, resized to one float64 so that the
	// displacements count columns.
	block, err := commit(dtype.Subarray([]int{rows, width}, []int{rows, local}, []int{0, 1}, dtype.OrderC, f64))
	if err != nil {
		return err
	}
	strip, err := dtype.Vector(rows, local, cols, f64)
	if err != nil {
		return err
	}
	stripAt, err := commit(dtype.Resized(strip, 0, 8))
	if err != nil {
		return err
	}
	var global []float64
	counts, displs := make([]int, size), make([]int, size)
	for q := range size {
		counts[q], displs[q] = 1, q*local
	}
	if rank == 0 {
		global = make([]float64, rows*cols)
	}
	if err := comm.GathervType(world, shm.Bytes(u), 1, block, shm.Bytes(global), counts, displs, stripAt, 0); err != nil {
		return err
	}
	if rank != 0 {
		return nil
	}

	// The same smoother on one grid, serially: the result must be identical.
	s, sn := make([]float64, rows*cols), make([]float64, rows*cols)
	for i := range rows {
		for j := range cols {
			s[i*cols+j] = initial(i, j)
		}
	}
	for range steps {
		sweep(s, sn, cols, 1, cols-1, func(int) bool { return false })
		s, sn = sn, s
	}
	diff, sum := 0.0, 0.0
	for k := range s {
		diff = max(diff, math.Abs(s[k]-global[k]))
		sum += global[k]
	}
	fmt.Printf("%d ranks, %d×%d grid, %d sweeps: sum %.6f, largest difference from the serial run %g\n", size, rows, cols, steps, sum, diff)
	if diff != 0 {
		return fmt.Errorf("the distributed result differs from the serial one by %g", diff)
	}
	return nil
}
