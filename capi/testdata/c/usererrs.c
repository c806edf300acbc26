/* ranks: 2
 * The program's own error classes and codes (MPI 4.1 §9.5):
 * MPI_Add_error_class and MPI_Add_error_code give values above
 * MPI_ERR_LASTCODE that MPI_LASTUSEDCODE follows, MPI_Error_class and
 * MPI_Error_string answer for them (an empty string until one is added),
 * and an error handler called with one gets it; MPI_Remove_error_string,
 * _code and _class take them away again in that order. */
#include <string.h>

#include "check.h"

static int seen;

static void handler(MPI_Comm *c, int *code, ...)
{
	(void)c;
	seen = *code;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int cls, code, code2, got, len, flag, *last;
	char s[MPI_MAX_ERROR_STRING];
	MPI_Add_error_class(&cls);
	MPI_Add_error_code(cls, &code);
	MPI_Add_error_code(MPI_ERR_OTHER, &code2);
	CHECK(cls > MPI_ERR_LASTCODE && code > MPI_ERR_LASTCODE && code2 > MPI_ERR_LASTCODE && cls != code && code != code2,
	      "values %d %d %d", cls, code, code2);
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag);
	CHECK(flag && *last >= cls && *last >= code && *last >= code2, "MPI_LASTUSEDCODE %d", flag ? *last : -1);
	MPI_Error_class(code, &got);
	CHECK(got == cls, "the class of code %d is %d, want %d", code, got, cls);
#ifdef MPI_ABI_VERSION /* an error class is its own class (9.4); Open MPI 4.1 answers MPI_ERR_UNKNOWN for the program's */
	MPI_Error_class(cls, &got);
	CHECK(got == cls, "the class of class %d is %d", cls, got);
#endif
	MPI_Error_class(code2, &got);
	CHECK(got == MPI_ERR_OTHER, "the class of a code of MPI_ERR_OTHER is %d", got);
	MPI_Error_string(code, s, &len);
	CHECK(len == 0 && s[0] == 0, "a code without a string: \"%s\" (%d)", s, len);
	MPI_Add_error_string(cls, "the library's errors");
	MPI_Add_error_string(code, "the library ran out of widgets");
	MPI_Error_string(code, s, &len);
	CHECK(strcmp(s, "the library ran out of widgets") == 0 && len == (int)strlen(s), "code's string: \"%s\" (%d)", s, len);
	MPI_Error_string(cls, s, &len);
	CHECK(strcmp(s, "the library's errors") == 0, "class's string: \"%s\"", s);
	MPI_Errhandler eh;
	MPI_Comm_create_errhandler(handler, &eh);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
	MPI_Comm_call_errhandler(MPI_COMM_WORLD, code);
	CHECK(seen == code, "the handler got %d, want %d", seen, code);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Errhandler_free(&eh);
	report("classes, codes and strings the program adds");

#ifdef MPI_ABI_VERSION /* the MPI_Remove_ calls are MPI 4.1's: Open MPI 4.1 has none */
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	CHECK(class_of(MPI_Add_error_string(MPI_ERR_ARG, "no")) == MPI_ERR_ARG, "a string on a predefined class");
	CHECK(class_of(MPI_Add_error_code(MPI_ERR_LASTCODE + 999999, &got)) == MPI_ERR_ARG, "a code of no class");
	CHECK(class_of(MPI_Remove_error_class(cls)) == MPI_ERR_ARG, "a class removed before its code");
	CHECK(class_of(MPI_Remove_error_code(code)) == MPI_ERR_ARG, "a code removed before its string");
	CHECK(MPI_Remove_error_string(code) == MPI_SUCCESS && MPI_Remove_error_code(code) == MPI_SUCCESS, "removing code %d", code);
	CHECK(class_of(MPI_Error_class(code, &got)) == MPI_ERR_ARG, "a removed code still has a class: %d", got);
	CHECK(MPI_Remove_error_string(cls) == MPI_SUCCESS && MPI_Remove_error_class(cls) == MPI_SUCCESS, "removing class %d", cls);
	CHECK(class_of(MPI_Add_error_code(cls, &got)) == MPI_ERR_ARG, "a code of a removed class");
	CHECK(class_of(MPI_Add_error_code(MPI_ERR_LASTCODE + 7777, &got)) == MPI_ERR_ARG, "a code of a value never given");
	CHECK(MPI_Remove_error_code(code2) == MPI_SUCCESS, "removing code %d of MPI_ERR_OTHER", code2);
	int again;
	MPI_Add_error_class(&again);
	CHECK(again != cls && again != code && again != code2, "a removed value given again: %d", again);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
#endif
	report("removed in order: string, code, class");
	MPI_Finalize();
	return 0;
}
