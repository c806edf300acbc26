package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shmrun/shmrun/internal/format"
)

// TestCommands: plain builds are one command; --check compiles with the
// instrumentation and links with the wrappers, splitting a command that
// does both so the link never sees -fsanitize (which would pull in the
// sanitizer's runtime).
func TestCommands(t *testing.T) {
	// The OpenMP wrappers after libc's copies, in format.CheckWrapped's order.
	var omp []string
	for _, n := range format.CheckWrapped[3:] {
		omp = append(omp, "--wrap="+n)
	}
	wrapsOMP := strings.Join(omp, ",")
	prefix := t.TempDir()
	if err := os.MkdirAll(filepath.Join(prefix, "include"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := commands(prefix, []string{"a.c"}, false, ""); err == nil || !strings.Contains(err.Error(), "no mpi.h") {
		t.Fatalf("no mpi.h: %v", err)
	}
	if err := os.WriteFile(filepath.Join(prefix, "include", "mpi.h"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SHMCC_CC", "gcc")
	join := func(cmds [][]string) []string {
		var out []string
		for _, c := range cmds {
			out = append(out, strings.Join(c, " "))
		}
		return out
	}
	inc, lib := "-I"+filepath.Join(prefix, "include"), filepath.Join(prefix, "lib")
	link := "-L" + lib + " -Wl,-rpath," + lib + " -lmpi_abi"
	for _, c := range []struct {
		args  []string
		check bool
		tmp   string
		want  []string
	}{
		{[]string{"a.c", "-o", "a"}, false, "", []string{"gcc " + inc + " -fno-plt a.c -o a " + link}},
		{[]string{"-c", "a.c"}, false, "", []string{"gcc " + inc + " -fno-plt -c a.c"}},
		{[]string{"-c", "a.c"}, true, "", []string{"gcc " + inc + " -fno-plt -fsanitize=thread -g -Wno-tsan -c a.c"}},
		{[]string{"a.o", "b.o", "-o", "p", "-lm"}, true, "", []string{"gcc a.o b.o -o p -lm -Wl,--wrap=memcpy,--wrap=memmove,--wrap=memset," + wrapsOMP + " " + link}},
		{[]string{"-O2", "-fopenmp", "a.c", "b.o", "-o", "p", "-lm", "-Wl,-z,now"}, true, "T", []string{
			"gcc " + inc + " -fno-plt -fsanitize=thread -g -Wno-tsan -O2 -fopenmp -c a.c -o " + filepath.Join("T", "0-a.o"),
			"gcc -O2 -fopenmp " + filepath.Join("T", "0-a.o") + " b.o -o p -lm -Wl,-z,now -Wl,--wrap=memcpy,--wrap=memmove,--wrap=memset," + wrapsOMP + " " + link,
		}},
	} {
		cmds, err := commands(prefix, c.args, c.check, c.tmp)
		if err != nil {
			t.Fatal(err)
		}
		if got := join(cmds); !slices.Equal(got, c.want) {
			t.Errorf("%v (check %v):\n got %q\nwant %q", c.args, c.check, got, c.want)
		}
	}
}
