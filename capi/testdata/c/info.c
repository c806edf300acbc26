/* ranks: 1
 * Info objects at their limits: a key longer than MPI_MAX_INFO_KEY - 1 is
 * MPI_ERR_INFO_KEY in every call that takes a key, and MPI_Info_get with a
 * valuelen of INT_MAX copies the value; MPI_Info_dup of MPI_INFO_NULL is
 * MPI_ERR_INFO (no info object to copy). */
#include <limits.h>
#include <string.h>

#include "check.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* Open MPI raises info errors there */
	MPI_Info info;
	MPI_Info_create(&info);
	MPI_Info_set(info, "color", "blue");

	char key[MPI_MAX_INFO_KEY + 8];
	memset(key, 'k', sizeof key - 1);
	key[sizeof key - 1] = 0;
	int flag = -1, len = -1, class = -1;
	int err = MPI_Info_delete(info, key);
	MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_INFO_KEY, "MPI_Info_delete of a long key: class %d, want MPI_ERR_INFO_KEY", class);
	err = MPI_Info_get_valuelen(info, key, &len, &flag);
	MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_INFO_KEY, "MPI_Info_get_valuelen of a long key: class %d, want MPI_ERR_INFO_KEY", class);
	report("long keys");

	char val[16] = "unset";
	err = MPI_Info_get(info, "color", INT_MAX, val, &flag);
	CHECK(err == MPI_SUCCESS && flag && strcmp(val, "blue") == 0, "MPI_Info_get with valuelen INT_MAX: %d, flag %d, %s", err, flag, val);
	err = MPI_Info_get(info, "color", -1, val, &flag);
	MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_ARG, "MPI_Info_get with valuelen -1: class %d, want MPI_ERR_ARG", class);
	report("valuelen at the ends");

	MPI_Info dup = MPI_INFO_NULL;
	err = MPI_Info_dup(MPI_INFO_NULL, &dup);
	MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_INFO, "MPI_Info_dup of MPI_INFO_NULL: class %d, want MPI_ERR_INFO", class);
	if (err == MPI_SUCCESS)
		MPI_Info_free(&dup);
	report("MPI_Info_dup of MPI_INFO_NULL");

	MPI_Info_free(&info);
	MPI_Finalize();
	return 0;
}
