//go:build !mpi && cgo

package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The header and the library against the standard's ABI tables
// (testdata/abi/constants.tsv, typed from the MPI-5.0 report, not derived
// from mpi.h).

type abiConst struct {
	name, ctype string
	value       int64
}

var parenHexRE = regexp.MustCompile(`^(-?\d+) \(0x[0-9A-Fa-f]+\)$`)
var voidPtrRE = regexp.MustCompile(`^\(\(void\*\)(\d+)\)$`)

// standard reads the table: every constant a C program can name, with
// its value as an integer.
func standard(t *testing.T) []abiConst {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "abi", "constants.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []abiConst
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		fl := strings.Split(l, "\t")
		if len(fl) < 3 {
			t.Fatalf("bad line %q", l)
		}
		if strings.HasPrefix(fl[1], "(Fortran only") {
			continue
		}
		v := fl[2]
		if m := parenHexRE.FindStringSubmatch(v); m != nil {
			v = m[1]
		} else if m := voidPtrRE.FindStringSubmatch(v); m != nil {
			v = m[1]
		}
		n, err := strconv.ParseInt(v, 0, 64)
		if err != nil {
			t.Fatalf("%s: value %q: %v", fl[0], fl[2], err)
		}
		out = append(out, abiConst{fl[0], fl[1], n})
	}
	if len(out) < 300 {
		t.Fatalf("only %d constants in the table", len(out))
	}
	return out
}

// TestHeaderAgainstStandard compiles a program that prints every
// constant of the table as mpi.h defines it, the status layout and the
// integer types' sizes, and compares. It does the same with the MPI
// Forum's published ABI header (testdata/abi-stubs, from
// mpi-forum/mpi-abi-stubs), which checks the table's transcription too.
func TestHeaderAgainstStandard(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler")
	}
	consts := standard(t)
	for _, h := range []struct{ name, dir string }{
		{"mpi.h", filepath.Join("..", "include", "abi")},
		{"mpi-abi-stubs", filepath.Join("testdata", "abi-stubs")},
	} {
		t.Run(h.name, func(t *testing.T) { headerAgainst(t, consts, h.dir) })
	}
}

func headerAgainst(t *testing.T, consts []abiConst, incdir string) {
	var src strings.Builder
	src.WriteString("#include <mpi.h>\n#include <stddef.h>\n#include <stdio.h>\nint main(void) {\n")
	for _, c := range consts {
		fmt.Fprintf(&src, "\tprintf(\"%s %%lld\\n\", (long long)(intptr_t)(%s));\n", c.name, c.name)
	}
	for _, e := range []string{
		"sizeof(MPI_Status)", "sizeof(int)", "offsetof(MPI_Status, MPI_SOURCE)", "offsetof(MPI_Status, MPI_TAG)",
		"offsetof(MPI_Status, MPI_ERROR)", "sizeof(MPI_Aint)", "sizeof(intptr_t)", "sizeof(MPI_Count)", "sizeof(MPI_Offset)",
		"sizeof(MPI_Comm)", "sizeof(void *)", "(MPI_Aint)-1 < 0", "(MPI_Count)-1 < 0", "(MPI_Offset)-1 < 0",
	} {
		fmt.Fprintf(&src, "\tprintf(\"%s %%lld\\n\", (long long)(%s));\n", strings.ReplaceAll(e, " ", ""), e)
	}
	src.WriteString("\treturn 0;\n}\n")
	dir := t.TempDir()
	cfile, exe := filepath.Join(dir, "consts.c"), filepath.Join(dir, "consts")
	if err := os.WriteFile(cfile, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", incdir, "-o", exe, cfile).CombinedOutput(); err != nil {
		t.Fatalf("compiling against mpi.h: %v\n%s", err, out)
	}
	out, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		n, _ := strconv.ParseInt(f[1], 10, 64)
		got[f[0]] = n
	}
	for _, c := range consts {
		if got[c.name] != c.value {
			t.Errorf("%s is %d in %s/mpi.h; the standard says %d", c.name, got[c.name], incdir, c.value)
		}
	}
	for e, want := range map[string]int64{
		"sizeof(MPI_Status)": 8 * got["sizeof(int)"], "offsetof(MPI_Status,MPI_SOURCE)": 0,
		"offsetof(MPI_Status,MPI_TAG)": got["sizeof(int)"], "offsetof(MPI_Status,MPI_ERROR)": 2 * got["sizeof(int)"],
		"sizeof(MPI_Aint)": got["sizeof(intptr_t)"], "sizeof(MPI_Count)": 8, "sizeof(MPI_Offset)": 8,
		"sizeof(MPI_Comm)": got["sizeof(void*)"], "(MPI_Aint)-1<0": 1, "(MPI_Count)-1<0": 1, "(MPI_Offset)-1<0": 1,
	} {
		if got[e] != want {
			t.Errorf("%s is %d, want %d", e, got[e], want)
		}
	}
}

// TestTablesAgainstStandard holds the library's own handle values (Go
// constants and tables) against the standard's.
func TestTablesAgainstStandard(t *testing.T) {
	std := map[string]int64{}
	for _, c := range standard(t) {
		std[c.name] = c.value
	}
	want := func(name string, h uintptr) {
		t.Helper()
		if v, ok := std[name]; !ok || v != int64(h) {
			t.Errorf("%s is %#x here; the standard says %#x (present: %v)", name, h, v, ok)
		}
	}
	for name, h := range map[string]uintptr{
		"MPI_COMM_NULL": hCommNull, "MPI_COMM_WORLD": hCommWorld, "MPI_COMM_SELF": hCommSelf,
		"MPI_GROUP_NULL": hGroupNull, "MPI_GROUP_EMPTY": hGroupEmpty, "MPI_WIN_NULL": hWinNull,
		"MPI_REQUEST_NULL": hRequestNull, "MPI_INFO_NULL": hInfoNull, "MPI_INFO_ENV": hInfoEnv,
		"MPI_MESSAGE_NULL": hMessageNull, "MPI_MESSAGE_NO_PROC": hMessageNoProc,
		"MPI_ERRORS_ARE_FATAL": hErrorsAreFatal, "MPI_ERRORS_ABORT": hErrorsAbort, "MPI_ERRORS_RETURN": hErrorsReturn,
		"MPI_ERRHANDLER_NULL": hErrhandlerNull, "MPI_OP_NULL": hOpNull, "MPI_DATATYPE_NULL": hDatatypeNull,
		"MPI_LONG_DOUBLE": 0x220, "MPI_BYTE": hByte,
	} {
		want(name, h)
	}
	for _, p := range predefTypes {
		want(p.name, p.h)
	}
	for _, p := range predefOps {
		want(p.op.String(), p.h)
	}
	// Every predefined datatype of the standard is in the library's table.
	have := map[string]bool{"MPI_DATATYPE_NULL": true, "MPI_LONG_LONG_INT": true, "MPI_C_COMPLEX": true}
	for _, p := range predefTypes {
		have[p.name] = true
	}
	f, _ := os.ReadFile(filepath.Join("testdata", "abi", "constants.tsv"))
	for _, l := range strings.Split(string(f), "\n") {
		if fl := strings.Split(l, "\t"); len(fl) > 1 && fl[1] == "MPI_Datatype" && !have[fl[0]] {
			t.Errorf("the standard's %s is not in the library's datatype table", fl[0])
		}
	}
}

// TestGeneratedFilesCurrent checks capi/mpi_aliases.h and
// capi/unsupported.c against include/abi/mpi.h and capi/mpi.c.
func TestGeneratedFilesCurrent(t *testing.T) {
	cmd := exec.Command("go", "run", "./internal/capigen", "-check", ".")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
