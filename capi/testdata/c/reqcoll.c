/* ranks: 3
 * Edge cases of the completion calls: a request of a
 * derived-datatype receive freed while active (its data still arrives),
 * MPI_ERR_IN_STATUS from the multi-completion calls, and the status's
 * MPI_ERROR left alone by the single-completion calls. */
#include <string.h>
#include "check.h"

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

	/* MPI_Request_free of an active receive into a vector: the receive
	 * goes on, and its data reaches the buffer's blocks (MPI 4.1 §3.7.3);
	 * the holes keep what they held. */
	{
		MPI_Datatype vec;
		MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
		MPI_Type_commit(&vec);
		int b[5] = {-1, -1, -1, -1, -1}, v[3] = {10, 20, 30}, last = 0;
		if (rank == 0) {
			MPI_Request r;
			CHECK(MPI_Irecv(b, 1, vec, 1, 5, MPI_COMM_WORLD, &r) == MPI_SUCCESS, "irecv");
			CHECK(MPI_Request_free(&r) == MPI_SUCCESS && r == MPI_REQUEST_NULL, "request_free");
		}
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 1) {
			MPI_Send(v, 3, MPI_INT, 0, 5, MPI_COMM_WORLD);
			MPI_Send(v, 1, MPI_INT, 0, 6, MPI_COMM_WORLD);
		}
		if (rank == 0) {
			/* Sent after the first, from the same rank: received after it. */
			MPI_Recv(&last, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			CHECK(b[0] == 10 && b[2] == 20 && b[4] == 30 && b[1] == -1 && b[3] == -1,
			      "freed receive left {%d %d %d %d %d}, want {10 -1 20 -1 30}", b[0], b[1], b[2], b[3], b[4]);
		}
		MPI_Type_free(&vec);
	}
	report("request_free of a derived receive");

	/* A truncated receive among others: Waitall, Testall, Waitsome and
	 * Testsome return MPI_ERR_IN_STATUS, each status's MPI_ERROR saying
	 * which failed. */
	for (int which = 0; which < 4; which++) {
		int v[2] = {1, 2}, a = 0, c = 0;
		if (rank == 1) {
			MPI_Send(v, 2, MPI_INT, 0, 7, MPI_COMM_WORLD);
			MPI_Send(v, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
		}
		if (rank == 0) {
			MPI_Request r[2];
			MPI_Status st[2];
			st[0].MPI_ERROR = st[1].MPI_ERROR = -5;
			MPI_Irecv(&a, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &r[0]);
			MPI_Irecv(&c, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, &r[1]);
			int rc = MPI_SUCCESS, flag = 0, out = 0, idx[2];
			switch (which) {
			case 0:
				rc = MPI_Waitall(2, r, st);
				break;
			case 1:
				while (!flag && rc == MPI_SUCCESS)
					rc = MPI_Testall(2, r, &flag, st);
				break;
			case 2:
			case 3:
				/* Until both are complete: the call completing the
				 * truncated one returns MPI_ERR_IN_STATUS. */
				for (int left = 2, got = MPI_SUCCESS; left > 0;) {
					got = which == 2 ? MPI_Waitsome(2, r, &out, idx, st) : MPI_Testsome(2, r, &out, idx, st);
					if (got != MPI_SUCCESS)
						rc = got;
					if (out == MPI_UNDEFINED)
						break;
					left -= out;
				}
				break;
			}
			CHECK(class_of(rc) == MPI_ERR_IN_STATUS, "call %d returned class %d, want MPI_ERR_IN_STATUS (%d)", which,
			      class_of(rc), MPI_ERR_IN_STATUS);
			if (which < 2)
				CHECK(class_of(st[0].MPI_ERROR) == MPI_ERR_TRUNCATE && st[1].MPI_ERROR == MPI_SUCCESS,
				      "call %d: MPI_ERROR %d and %d", which, st[0].MPI_ERROR, st[1].MPI_ERROR);
			for (int i = 0; i < 2; i++)
				if (r[i] != MPI_REQUEST_NULL)
					MPI_Wait(&r[i], MPI_STATUS_IGNORE);
		}
		MPI_Barrier(MPI_COMM_WORLD);
	}
	report("MPI_ERR_IN_STATUS");

	/* The calls that return one status leave its MPI_ERROR as it was
	 * (MPI 4.1 section 3.2.5: only the multi-completion calls set it). */
	{
		int v = 3, w = 0;
		if (rank == 1) {
			MPI_Send(&v, 1, MPI_INT, 0, 11, MPI_COMM_WORLD);
			MPI_Send(&v, 1, MPI_INT, 0, 12, MPI_COMM_WORLD);
			MPI_Send(&v, 1, MPI_INT, 0, 13, MPI_COMM_WORLD);
		}
		if (rank == 0) {
			MPI_Status st;
			MPI_Request r;
			st.MPI_ERROR = 4242;
			MPI_Recv(&w, 1, MPI_INT, 1, 11, MPI_COMM_WORLD, &st);
			CHECK(st.MPI_ERROR == 4242, "MPI_Recv set MPI_ERROR to %d", st.MPI_ERROR);
			st.MPI_ERROR = 4242;
			MPI_Irecv(&w, 1, MPI_INT, 1, 12, MPI_COMM_WORLD, &r);
			MPI_Wait(&r, &st);
			CHECK(st.MPI_ERROR == 4242, "MPI_Wait set MPI_ERROR to %d", st.MPI_ERROR);
			st.MPI_ERROR = 4242;
			MPI_Irecv(&w, 1, MPI_INT, 1, 13, MPI_COMM_WORLD, &r);
			for (int flag = 0; !flag;)
				MPI_Test(&r, &flag, &st);
			CHECK(st.MPI_ERROR == 4242, "MPI_Test set MPI_ERROR to %d", st.MPI_ERROR);
		}
	}
	report("MPI_ERROR left alone");

	MPI_Finalize();
	return failures != 0;
}
