// Command cart-heat runs a 2D Jacobi smoother on a grid split into blocks
// in both dimensions, laid out by a Cartesian topology: comm.DimsCreate
// picks the process grid, c.CartCreate makes the communicator, and
// c.CartShift names each block's four neighbours (comm.ProcNull past the
// grid's edges, where the exchange does nothing). Ghost rows move as
// plain float64s, ghost columns as a dtype.Vector, both by
// c.SendrecvType; each sweep's largest change is reduced by
// comm.Allreduce with atomics.Max until it falls below a tolerance. Every
// rank checks its block against the same smoother run serially.
//
//	go run ./cmd/shmrun -n 4 --oversubscribe ./examples/cart-heat
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
	n     = 48   // the global grid is n×n
	tol   = 1e-2 // stop once no point changes by more than this
	limit = 5000 // sweeps at most
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

// initial is the starting value at global (i, j): a hot top edge, the
// rest cold; the edges stay fixed.
func initial(i, j int) float64 {
	if i == 0 {
		return 100
	}
	return 0
}

// sweep is one Jacobi step on a rows×cols row-major grid u into next,
// updating the points for which inner is true; it returns the largest
// change.
func sweep(u, next []float64, rows, cols int, inner func(i, j int) bool) float64 {
	copy(next, u)
	most := 0.0
	for i := 1; i < rows-1; i++ {
		for j := 1; j < cols-1; j++ {
			if inner(i, j) {
				v := 0.25 * (u[(i-1)*cols+j] + u[(i+1)*cols+j] + u[i*cols+j-1] + u[i*cols+j+1])
				most = math.Max(most, math.Abs(v-u[i*cols+j]))
				next[i*cols+j] = v
			}
		}
	}
	return most
}

// serial runs the smoother on the whole grid and returns it and the
// number of sweeps.
func serial() ([]float64, int) {
	u, next := make([]float64, n*n), make([]float64, n*n)
	for i := range n {
		for j := range n {
			u[i*n+j] = initial(i, j)
		}
	}
	all := func(i, j int) bool { return true }
	for k := 1; ; k++ {
		most := sweep(u, next, n, n, all)
		u, next = next, u
		if most < tol || k == limit {
			return u, k
		}
	}
}

func run(world *comm.Comm) error {
	dims := []int{0, 0}
	if err := comm.DimsCreate(world.Size(), dims); err != nil {
		return err
	}
	if n%dims[0] != 0 || n%dims[1] != 0 {
		return fmt.Errorf("a %d×%d process grid does not divide the %d×%d grid", dims[0], dims[1], n, n)
	}
	grid, err := world.CartCreate(dims, []bool{false, false}, true)
	if err != nil {
		return err
	}
	defer grid.Free()
	_, _, co, err := grid.CartGet()
	if err != nil {
		return err
	}
	up, down, err := grid.CartShift(0, 1) // the ranks above and below
	if err != nil {
		return err
	}
	left, right, err := grid.CartShift(1, 1)
	if err != nil {
		return err
	}

	// The local block, br×bc points, with a ghost row or column on each
	// side: rows×cols in all, row-major.
	br, bc := n/dims[0], n/dims[1]
	rows, cols := br+2, bc+2
	i0, j0 := co[0]*br, co[1]*bc // the block's first global point
	u, next := make([]float64, rows*cols), make([]float64, rows*cols)
	for i := range rows {
		for j := range cols {
			if gi, gj := i0+i-1, j0+j-1; gi >= 0 && gi < n && gj >= 0 && gj < n {
				u[i*cols+j] = initial(gi, gj)
			}
		}
	}
	f64 := dtype.Basic(atomics.Float64)
	column, err := dtype.Vector(br, 1, cols, f64) // a column of the block's rows
	if err == nil {
		err = column.Commit()
	}
	if err != nil {
		return err
	}
	// A point is updated if it is inside the global grid's fixed edges.
	inner := func(i, j int) bool {
		gi, gj := i0+i-1, j0+j-1
		return gi > 0 && gi < n-1 && gj > 0 && gj < n-1
	}
	at := func(b []float64, i, j int) []byte { return shm.Bytes(b[i*cols+j:]) }
	exchange := func(u []float64) error {
		// The first and last rows of the block, to the neighbours' ghost rows.
		if _, err := grid.SendrecvType(at(u, 1, 1), bc, f64, up, 0, at(u, rows-1, 1), bc, f64, down, 0); err != nil {
			return err
		}
		if _, err := grid.SendrecvType(at(u, rows-2, 1), bc, f64, down, 1, at(u, 0, 1), bc, f64, up, 1); err != nil {
			return err
		}
		// The first and last columns, strided.
		if _, err := grid.SendrecvType(at(u, 1, 1), 1, column, left, 2, at(u, 1, cols-1), 1, column, right, 2); err != nil {
			return err
		}
		_, err := grid.SendrecvType(at(u, 1, cols-2), 1, column, right, 3, at(u, 1, 0), 1, column, left, 3)
		return err
	}

	sweeps := 0
	for k := 1; ; k++ {
		if err := exchange(u); err != nil {
			return err
		}
		most := []float64{sweep(u, next, rows, cols, inner)}
		u, next = next, u
		if err := comm.AllreduceInPlace(grid, most, atomics.Max); err != nil {
			return err
		}
		if most[0] < tol || k == limit {
			sweeps = k
			break
		}
	}

	// Every rank checks its block against the serial run.
	want, wantSweeps := serial()
	diff := []float64{0}
	for i := 1; i <= br; i++ {
		for j := 1; j <= bc; j++ {
			diff[0] = math.Max(diff[0], math.Abs(u[i*cols+j]-want[(i0+i-1)*n+j0+j-1]))
		}
	}
	if err := comm.AllreduceInPlace(grid, diff, atomics.Max); err != nil {
		return err
	}
	if grid.Rank() == 0 {
		fmt.Printf("%d ranks as a %d×%d grid, %d×%d points, %d sweeps (serial: %d), largest difference from the serial run %g\n",
			grid.Size(), dims[0], dims[1], n, n, sweeps, wantSweeps, diff[0])
	}
	if sweeps != wantSweeps || diff[0] > 1e-12 {
		return fmt.Errorf("rank %d: %d sweeps against the serial %d, difference %g", grid.Rank(), sweeps, wantSweeps, diff[0])
	}
	return nil
}
