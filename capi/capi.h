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

/* A window's descriptor, in C memory, for the RMA calls that never leave
 * C (mpi_fast.h): the parts of every rank as this process maps them, and
 * the passive-target epochs open on it. The Go half writes it (at creation,
 * after each Lock, Unlock, Lock_all, Unlock_all, and at Free); C reads it.
 * Only windows whose every part is mapped here (MPI_Win_allocate_shared,
 * MPI_Win_allocate) have one. */
typedef struct shmrun_win_desc {
	int n;          /* ranks */
	int lockall;    /* a Lock_all epoch is open (relaxed atomic) */
	int *locked;    /* per target: a Lock epoch is open (relaxed atomic) */
	char **base;    /* per target: its part */
	MPI_Aint *size; /* per target: bytes */
	int *disp;      /* per target: the disp unit */
	MPI_Aint *maxdisp; /* per target: size / disp unit, the largest displacement */
	/* A word of this process alone, on lines of its own: a locked add on
	 * it is the full fence of Flush (cheaper than MFENCE, as the Go side
	 * does it). */
	_Alignas(64) uint64_t fence;
	char pad[56];
} shmrun_win_desc;

/* Window handles are SHMRUN_WIN_BASE + 16 * slot; slot indexes
 * shmrun_wins, which holds the descriptor (NULL: the Go path only). */
#define SHMRUN_WIN_SLOTS 4096
#define SHMRUN_WIN_BASE ((uintptr_t)0x20000000)
extern shmrun_win_desc *shmrun_wins[SHMRUN_WIN_SLOTS];

#endif
