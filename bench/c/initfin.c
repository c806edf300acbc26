/*
 * initfin - the smallest complete MPI job. The harness times the whole
 * `mpirun -n N initfin` from outside (wall clock), which is job start and
 * teardown: launcher, process creation, MPI_Init wire-up, one barrier so
 * every rank is really up, and MPI_Finalize.
 */
#include <mpi.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
