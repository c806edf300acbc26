/* capi.h - what the library's C and Go halves share (not installed). */
#ifndef SHMRUN_CAPI_H
#define SHMRUN_CAPI_H
#include "mpi.h"

/* A window's predefined attributes, in C memory (MPI_Win_get_attr hands out
 * pointers to them): made at the window's creation, freed with it. */
typedef struct shmrun_win_attrs {
	MPI_Aint size;
	int disp_unit;
	int flavor;
	int model;
} shmrun_win_attrs;

#endif
