/* ranks: 4
 * A linked list in a dynamic window, as the textbooks build it: every
 * rank attaches elements of its own memory (MPI_Alloc_mem), and appends
 * them to one list concurrently under Lock_all: a compare-and-swap claims
 * the tail's next rank, an atomic replace then publishes the next
 * displacement (MPI_Get_address), and a rank that lost the race follows
 * the new tail, reading its displacement with MPI_Fetch_and_op(MPI_NO_OP)
 * until it is there. Rank 0 then walks the list by MPI_Get and checks
 * that it holds every element once, each rank's in the order appended.
 * Under Open MPI (4.1's sm has no dynamic windows):
 * openmpi osc: pt2pt
 */
#include <stddef.h>
#include <stdint.h>
#include "check.h"

#define PER_RANK 100

typedef struct {
	int64_t value;     /* rank * 1000 + i; -1 for the head */
	int64_t next_rank; /* -1: none yet */
	MPI_Aint next_disp; /* 0 until published */
} elem;

int main(int argc, char **argv)
{
	int me, n;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &n);

	MPI_Win w;
	MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w);
	elem *mine[PER_RANK + 1];
	int nmine = 0;

	/* The head, in rank 0's memory; everyone learns its displacement. */
	MPI_Aint head = 0;
	if (me == 0) {
		elem *h;
		MPI_Alloc_mem(sizeof(elem), MPI_INFO_NULL, &h);
		*h = (elem){-1, -1, 0};
		MPI_Win_attach(w, h, sizeof(elem));
		MPI_Get_address(h, &head);
		mine[nmine++] = h;
	}
	MPI_Bcast(&head, 1, MPI_AINT, 0, MPI_COMM_WORLD);

	int64_t tail_rank = 0;
	MPI_Aint tail_disp = head;
	MPI_Win_lock_all(0, w);
	for (int i = 0; i < PER_RANK; i++) {
		elem *e;
		MPI_Alloc_mem(sizeof(elem), MPI_INFO_NULL, &e);
		*e = (elem){me * 1000 + i, -1, 0};
		MPI_Win_attach(w, e, sizeof(elem));
		mine[nmine++] = e;
		MPI_Aint disp;
		MPI_Get_address(e, &disp);
		for (;;) {
			int64_t none = -1, rank = me, was;
			MPI_Compare_and_swap(&rank, &none, &was, MPI_INT64_T, (int)tail_rank,
					     tail_disp + (MPI_Aint)offsetof(elem, next_rank), w);
			MPI_Win_flush((int)tail_rank, w);
			if (was == -1) { /* ours: publish where it is */
				MPI_Accumulate(&disp, 1, MPI_AINT, (int)tail_rank, tail_disp + (MPI_Aint)offsetof(elem, next_disp),
					       1, MPI_AINT, MPI_REPLACE, w);
				MPI_Win_flush((int)tail_rank, w);
				tail_disp = disp;
				tail_rank = me;
				break;
			}
			/* Another rank appended first: follow it once its
			 * displacement is published. */
			MPI_Aint next = 0, dummy = 0;
			while (next == 0) {
				MPI_Fetch_and_op(&dummy, &next, MPI_AINT, (int)tail_rank,
						 tail_disp + (MPI_Aint)offsetof(elem, next_disp), MPI_NO_OP, w);
				MPI_Win_flush((int)tail_rank, w);
			}
			tail_disp = next;
			tail_rank = was;
		}
	}
	MPI_Win_unlock_all(w);
	MPI_Barrier(MPI_COMM_WORLD);

	/* Rank 0 walks the list. */
	if (me == 0) {
		long count = 0, out_of_order = 0, last[64];
		for (int q = 0; q < n && q < 64; q++)
			last[q] = -1;
		int64_t r = 0;
		MPI_Aint d = head;
		MPI_Win_lock_all(0, w);
		for (;;) {
			elem e;
			MPI_Get(&e, (int)sizeof e, MPI_BYTE, (int)r, d, (int)sizeof e, MPI_BYTE, w);
			MPI_Win_flush((int)r, w);
			if (e.value >= 0) {
				int q = (int)(e.value / 1000);
				long k = (long)(e.value % 1000);
				count++;
				if (q < 0 || q >= n || q >= 64 || k != last[q] + 1)
					out_of_order++;
				else
					last[q] = k;
			}
			if (e.next_rank < 0)
				break;
			r = e.next_rank;
			d = e.next_disp;
		}
		MPI_Win_unlock_all(w);
		CHECK(count == (long)n * PER_RANK, "the list holds %ld elements, want %ld", count, (long)n * PER_RANK);
		CHECK(out_of_order == 0, "%ld elements out of their rank's order", out_of_order);
	}
	report("a linked list built concurrently in a dynamic window");

	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < nmine; i++) {
		MPI_Win_detach(w, mine[i]);
		MPI_Free_mem(mine[i]);
	}
#ifdef MPI_ABI_VERSION
	{
		/* A region of size 0 attached at an attached region's base does not
		 * change what MPI_Win_detach of that base detaches. */
		static char region[64];
		int e1 = MPI_Win_attach(w, region, sizeof region);
		int e2 = MPI_Win_attach(w, region, 0);
		int e3 = MPI_Win_detach(w, region);
		int e4 = MPI_Win_attach(w, region, sizeof region);
		CHECK(e1 == MPI_SUCCESS && e2 == MPI_SUCCESS && e3 == MPI_SUCCESS && e4 == MPI_SUCCESS,
		      "attach, attach of size 0 at its base, detach, attach again: %d %d %d %d", e1, e2, e3, e4);
		MPI_Win_detach(w, region);
	}
#endif
	report("a region of size 0 at an attached region's base");
	MPI_Win_free(&w);
	MPI_Finalize();
	return 0;
}
