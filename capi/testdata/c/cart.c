/* ranks: 7
 * Cartesian topologies: MPI_Dims_create, a 2 x 3 grid periodic in its
 * second dimension over 6 of the 7 ranks (the seventh gets
 * MPI_COMM_NULL), a halo exchange between MPI_Cart_shift's neighbours,
 * rows and columns by MPI_Cart_sub with an Allreduce in each, the
 * coordinate calls, MPI_Topo_test through a dup and a split, and the
 * errors returned under MPI_ERRORS_RETURN. */
#include "check.h"

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* MPI_Dims_create's */

	/* MPI_Dims_create: balanced, non-increasing, fixed entries kept. */
	int d2[2] = {0, 0}, d3[3] = {0, 0, 0}, dfix[3] = {0, 5, 0}, d1[1] = {0};
	CHECK(MPI_Dims_create(6, 2, d2) == MPI_SUCCESS && d2[0] == 3 && d2[1] == 2, "dims 6/2: %d %d", d2[0], d2[1]);
	CHECK(MPI_Dims_create(24, 3, d3) == MPI_SUCCESS && d3[0] == 4 && d3[1] == 3 && d3[2] == 2, "dims 24/3: %d %d %d", d3[0], d3[1], d3[2]);
	CHECK(MPI_Dims_create(60, 3, dfix) == MPI_SUCCESS && dfix[0] == 4 && dfix[1] == 5 && dfix[2] == 3, "dims 60/(0,5,0): %d %d %d", dfix[0], dfix[1], dfix[2]);
	CHECK(MPI_Dims_create(7, 1, d1) == MPI_SUCCESS && d1[0] == 7, "dims 7/1: %d", d1[0]);
	/* Impossible dimensions: MPI_ERR_DIMS (Open MPI's class too). */
	int fixed[2] = {4, 0};
	CHECK(class_of(MPI_Dims_create(6, 2, fixed)) == MPI_ERR_DIMS, "dims 6/(4,0): class %d", class_of(MPI_Dims_create(6, 2, fixed)));
	int neg[2] = {-1, 0};
	CHECK(class_of(MPI_Dims_create(6, 2, neg)) == MPI_ERR_DIMS, "dims 6/(-1,0): class %d", class_of(MPI_Dims_create(6, 2, neg)));
	report("MPI_Dims_create");

	/* A 2 x 3 grid, periodic along the rows (dimension 1). */
	int dims[2] = {2, 3}, periods[2] = {0, 1}, topo;
	MPI_Topo_test(MPI_COMM_WORLD, &topo);
	CHECK(topo == MPI_UNDEFINED, "world's topology %d", topo);
	MPI_Comm cart;
	CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart) == MPI_SUCCESS, "Cart_create");
	int newrank;
	MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &newrank);
	/* Open MPI 4.1 gives rank 6 its own rank, outside the grid. */
#ifdef MPI_ABI_VERSION
	CHECK(newrank == (rank < 6 ? rank : MPI_UNDEFINED), "Cart_map gave %d", newrank);
#else
	CHECK(rank == 6 || newrank == rank, "Cart_map gave %d", newrank);
#endif
	if (rank == 6) {
		CHECK(cart == MPI_COMM_NULL, "rank 6 got a grid communicator");
	} else {
		int csize, crank, nd, gd[2], gp[2], gc[2];
		MPI_Comm_size(cart, &csize);
		MPI_Comm_rank(cart, &crank);
		CHECK(csize == 6, "grid of %d ranks", csize);
		MPI_Topo_test(cart, &topo);
		CHECK(topo == MPI_CART, "grid's topology %d", topo);
		MPI_Cartdim_get(cart, &nd);
		MPI_Cart_get(cart, 2, gd, gp, gc);
		CHECK(nd == 2 && gd[0] == 2 && gd[1] == 3 && gp[0] == 0 && gp[1] == 1, "Cart_get: %d dims %dx%d periods %d %d", nd, gd[0], gd[1], gp[0], gp[1]);
		CHECK(gc[0] == crank / 3 && gc[1] == crank % 3, "rank %d at (%d, %d)", crank, gc[0], gc[1]);
		for (int r = 0; r < csize; r++) {
			int co[2], back;
			MPI_Cart_coords(cart, r, 2, co);
			MPI_Cart_rank(cart, co, &back);
			CHECK(co[0] == r / 3 && co[1] == r % 3 && back == r, "rank %d -> (%d, %d) -> %d", r, co[0], co[1], back);
		}
		int wrapped[2] = {1, -1}, at;
		MPI_Cart_rank(cart, wrapped, &at);
		CHECK(at == 5, "(1, -1) wraps to rank %d", at);

		/* Shifts: along the periodic rows the ring closes; along the
		 * columns the edges see MPI_PROC_NULL. */
		int src, dst;
		MPI_Cart_shift(cart, 1, 1, &src, &dst);
		CHECK(src == gc[0] * 3 + (gc[1] + 2) % 3 && dst == gc[0] * 3 + (gc[1] + 1) % 3, "row shift %d <- %d -> %d", src, crank, dst);
		int up, down;
		MPI_Cart_shift(cart, 0, 1, &up, &down);
		CHECK(up == (gc[0] == 0 ? MPI_PROC_NULL : crank - 3) && down == (gc[0] == 1 ? MPI_PROC_NULL : crank + 3), "column shift %d <- %d -> %d", up, crank, down);

		/* A halo exchange: each rank sends its rank up and right and
		 * receives from below and left; MPI_PROC_NULL leaves the ghost. */
		int ghost_left = -1, ghost_up = -1;
		MPI_Sendrecv(&crank, 1, MPI_INT, dst, 1, &ghost_left, 1, MPI_INT, src, 1, cart, MPI_STATUS_IGNORE);
		MPI_Sendrecv(&crank, 1, MPI_INT, down, 2, &ghost_up, 1, MPI_INT, up, 2, cart, MPI_STATUS_IGNORE);
		CHECK(ghost_left == src, "left ghost %d, want %d", ghost_left, src);
		CHECK(ghost_up == (up == MPI_PROC_NULL ? -1 : up), "upper ghost %d, want %d", ghost_up, up);

		/* Rows and columns. */
		int keep_row[2] = {0, 1}, keep_col[2] = {1, 0};
		MPI_Comm row, col;
		MPI_Cart_sub(cart, keep_row, &row);
		MPI_Cart_sub(cart, keep_col, &col);
		int rsize, rrank, rd, rp, rc, sum;
		MPI_Comm_size(row, &rsize);
		MPI_Comm_rank(row, &rrank);
		MPI_Cart_get(row, 1, &rd, &rp, &rc);
		CHECK(rsize == 3 && rrank == gc[1] && rd == 3 && rp == 1 && rc == gc[1], "row: size %d rank %d dims %d periods %d", rsize, rrank, rd, rp);
		MPI_Allreduce(&crank, &sum, 1, MPI_INT, MPI_SUM, row);
		CHECK(sum == 9 * gc[0] + 3, "row sum %d", sum);
		MPI_Allreduce(&crank, &sum, 1, MPI_INT, MPI_SUM, col);
		CHECK(sum == 2 * gc[1] + 3, "column sum %d", sum);
		MPI_Cart_get(col, 1, &rd, &rp, &rc);
		CHECK(rd == 2 && rp == 0 && rc == gc[0], "column: dims %d periods %d coord %d", rd, rp, rc);

		/* With no dimension kept, each rank is alone. */
		int none[2] = {0, 0};
		MPI_Comm self;
		MPI_Cart_sub(cart, none, &self);
		MPI_Comm_size(self, &rsize);
		MPI_Cartdim_get(self, &nd);
		CHECK(rsize == 1 && nd == 0, "no dims kept: size %d, %d dims", rsize, nd);

		/* A dup keeps the topology; a split drops it. */
		MPI_Comm dup, split;
		MPI_Comm_dup(cart, &dup);
		MPI_Topo_test(dup, &topo);
		CHECK(topo == MPI_CART, "dup's topology %d", topo);
		MPI_Cart_shift(dup, 1, 1, &src, &dst);
		CHECK(dst == gc[0] * 3 + (gc[1] + 1) % 3, "dup's row shift %d", dst);
		MPI_Comm_split(cart, 0, crank, &split);
		MPI_Topo_test(split, &topo);
		CHECK(topo == MPI_UNDEFINED, "split's topology %d", topo);
		MPI_Comm_free(&split);
		MPI_Comm_free(&dup);
		MPI_Comm_free(&self);
		MPI_Comm_free(&row);
		MPI_Comm_free(&col);

		/* Errors returned: a coordinate past a non-periodic edge, a
		 * dimension that does not exist, too small an array. */
		MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
		int past[2] = {2, 0};
		CHECK(MPI_Cart_rank(cart, past, &at) != MPI_SUCCESS, "Cart_rank past the edge succeeded");
#ifdef MPI_ABI_VERSION
		/* Open MPI 4.1 checks none of these: it shifts along a
		 * dimension that does not exist, gives coordinates to a rank
		 * outside the communicator and writes past a maxdims too
		 * small. */
		int co[2];
		CHECK(class_of(MPI_Cart_shift(cart, 2, 1, &src, &dst)) == MPI_ERR_ARG, "Cart_shift along dimension 2");
		CHECK(class_of(MPI_Cart_coords(cart, csize, 2, co)) == MPI_ERR_RANK, "Cart_coords of rank %d", csize);
		CHECK(class_of(MPI_Cart_coords(cart, 0, 1, co)) == MPI_ERR_ARG, "Cart_coords with maxdims 1");
		CHECK(class_of(MPI_Cart_rank(cart, past, &at)) == MPI_ERR_ARG, "Cart_rank past the edge");
#endif
		MPI_Comm_free(&cart);
	}
	report("a 2 x 3 grid: coordinates, shifts, halo, sub-grids, dup");

	/* Errors on every rank: a grid larger than the communicator, a
	 * topology call on one without a topology. */
	int big[2] = {4, 2};
	MPI_Comm none = MPI_COMM_NULL;
	int err = MPI_Cart_create(MPI_COMM_WORLD, 2, big, periods, 0, &none);
	CHECK(err != MPI_SUCCESS && none == MPI_COMM_NULL, "an 8-rank grid over 7 ranks: %d", err);
	int src, dst;
	CHECK(class_of(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &src, &dst)) == MPI_ERR_TOPOLOGY, "Cart_shift without a topology");
	int nd;
	CHECK(class_of(MPI_Cartdim_get(MPI_COMM_WORLD, &nd)) == MPI_ERR_TOPOLOGY, "Cartdim_get without a topology");
	int keep[1] = {1};
	MPI_Comm sub;
	CHECK(class_of(MPI_Cart_sub(MPI_COMM_WORLD, keep, &sub)) == MPI_ERR_TOPOLOGY, "Cart_sub without a topology");
	int bad[2] = {0, 0};
	CHECK(MPI_Dims_create(7, 2, (int[]){2, 0}) != MPI_SUCCESS, "Dims_create of 7 over (2, 0) succeeded");
	CHECK(MPI_Dims_create(-1, 2, bad) != MPI_SUCCESS, "Dims_create of -1 nodes succeeded");
#ifdef MPI_ABI_VERSION
	/* One rank's NULL output fails the others' call too. */
	err = MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, rank == 3 ? NULL : &none);
	CHECK(class_of(err) == MPI_ERR_ARG, "Cart_create with rank 3's NULL: class %d", class_of(err));
	err = MPI_Cart_create(MPI_COMM_WORLD, 2, dims, rank == 2 ? (int[]){1, 1} : periods, 0, &none);
	CHECK(class_of(err) == MPI_ERR_ARG, "Cart_create with rank 2's other periods: class %d", class_of(err));
#endif
	report("errors returned");

	MPI_Finalize();
	return failures != 0;
}
