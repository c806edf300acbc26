// Command shmcc compiles and links C programs against shmrun's MPI library
// (libmpi_abi, the MPI 5.0 standard ABI): it runs the C compiler with the
// include path of mpi.h, and, when linking, the library and an rpath to it.
//
//	shmcc [compiler arguments...]      e.g. shmcc prog.c -o prog
//	shmcc -show [compiler arguments...] print the commands instead
//	shmcc --check [compiler arguments...]  (also with -show: shmcc -show --check ...)
//
// --check builds the program for shmrun --check to see its own loads and
// stores, not only its MPI calls: sources are compiled with the compiler's
// thread-sanitizer instrumentation (-fsanitize=thread -g), whose calls on
// every access land in libmpi_abi's hooks instead of the sanitizer's
// runtime, and the program's memcpy, memmove and memset calls go through
// checking wrappers (-Wl,--wrap=...). A command that compiles and links
// runs as two: each source compiled to a temporary object, then the link
// without -fsanitize (which would pull in the sanitizer's runtime).
//
// It finds include/ and lib/ beside its own bin/ directory (where
// go run ./cmd/shmrun-install DIR put them). The compiler is $SHMCC_CC, or
// cc. Installed also as mpicc_abi, the standard ABI's wrapper name.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/shmrun/shmrun/internal/format"
)

func main() {
	args := os.Args[1:]
	show, check := false, false
	for len(args) > 0 && (args[0] == "-show" || args[0] == "--check") {
		show = show || args[0] == "-show"
		check = check || args[0] == "--check"
		args = args[1:]
	}
	tmp := ""
	if check && show {
		tmp = "TMPDIR"
	} else if check && links(args) && slices.ContainsFunc(args, isSource) {
		d, err := os.MkdirTemp("", "shmcc-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "shmcc:", err)
			os.Exit(2)
		}
		tmp = d
		defer os.RemoveAll(d)
	}
	prefix, err := prefixDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "shmcc:", err)
		os.Exit(2)
	}
	cmds, err := commands(prefix, args, check, tmp)
	if err != nil {
		fmt.Fprintln(os.Stderr, "shmcc:", err)
		os.Exit(2)
	}
	if show {
		for _, c := range cmds {
			fmt.Println(strings.Join(c, " "))
		}
		return
	}
	if len(cmds) == 1 {
		path, err := exec.LookPath(cmds[0][0])
		if err != nil {
			fmt.Fprintln(os.Stderr, "shmcc:", err)
			os.Exit(2)
		}
		err = syscall.Exec(path, cmds[0], os.Environ())
		fmt.Fprintln(os.Stderr, "shmcc:", err)
		os.Exit(2)
	}
	for _, c := range cmds {
		cmd := exec.Command(c[0], c[1:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			code := 2
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else {
				fmt.Fprintln(os.Stderr, "shmcc:", err)
			}
			os.RemoveAll(tmp)
			os.Exit(code)
		}
	}
}

// checkCompile and checkLink are what --check adds to compiling and to
// linking: libc's copies and OpenMP's synchronization reach the library's
// checking wrappers (__wrap_NAME, which call NAME).
var (
	checkCompile = []string{"-fsanitize=thread", "-g", "-Wno-tsan"}
	checkLink    = []string{"-Wl," + wraps(format.CheckWrapped)}
)

func wraps(names []string) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = "--wrap=" + n
	}
	return strings.Join(s, ",")
}

// noPLT makes the program call libmpi_abi through its GOT entries, not
// through PLT stubs: one jump less per MPI call, which is most of an
// RMA fast path's cost (two bound ranks, MPI_Put 8 B + MPI_Win_flush
// 6.5-7.1 -> 6.25 ns, Lock + Unlock 6.9-7.5 -> 6.6). A later -fplt of
// the user's overrides it.
const noPLT = "-fno-plt"

// commands are the compiler commands for args with the installation in
// prefix: one, or with check and sources to compile and link, a compile
// per source (objects in tmp) and the link.
func commands(prefix string, args []string, check bool, tmp string) ([][]string, error) {
	inc, lib := filepath.Join(prefix, "include"), filepath.Join(prefix, "lib")
	if _, err := os.Stat(filepath.Join(inc, "mpi.h")); err != nil {
		return nil, fmt.Errorf("no mpi.h in %s: install with go run ./cmd/shmrun-install DIR and run DIR/bin/shmcc", inc)
	}
	cc := os.Getenv("SHMCC_CC")
	if cc == "" {
		cc = "cc"
	}
	linkFlags := []string{"-L" + lib, "-Wl,-rpath," + lib, "-lmpi_abi"}
	if !check {
		cmd := append([]string{cc, "-I" + inc, noPLT}, args...)
		if links(args) {
			cmd = append(cmd, linkFlags...)
		}
		return [][]string{cmd}, nil
	}
	if !links(args) {
		return [][]string{append(append([]string{cc, "-I" + inc, noPLT}, checkCompile...), args...)}, nil
	}
	if tmp == "" { // objects only: link
		return [][]string{append(append(append([]string{cc}, args...), checkLink...), linkFlags...)}, nil
	}
	// Compile each source with the flags that matter to compiling, then
	// link the objects in their place.
	var common []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-o":
			i++
		case isSource(a) || linkOnly(a):
		default:
			common = append(common, a)
		}
	}
	var cmds [][]string
	link := []string{cc}
	for _, a := range args {
		if !isSource(a) {
			link = append(link, a)
			continue
		}
		obj := filepath.Join(tmp, fmt.Sprintf("%d-%s.o", len(cmds), strings.TrimSuffix(filepath.Base(a), filepath.Ext(a))))
		c := append(append(append([]string{cc, "-I" + inc, noPLT}, checkCompile...), common...), "-c", a, "-o", obj)
		cmds = append(cmds, c)
		link = append(link, obj)
	}
	link = append(append(link, checkLink...), linkFlags...)
	return append(cmds, link), nil
}

// isSource reports whether a names a C or C++ source file.
func isSource(a string) bool {
	if strings.HasPrefix(a, "-") {
		return false
	}
	switch filepath.Ext(a) {
	case ".c", ".cc", ".cpp", ".cxx", ".c++", ".C", ".i", ".ii":
		return true
	}
	return false
}

// linkOnly reports whether a is an argument only the link takes: a
// library, a library directory, a linker option, an object or archive.
func linkOnly(a string) bool {
	switch {
	case strings.HasPrefix(a, "-l"), strings.HasPrefix(a, "-L"), strings.HasPrefix(a, "-Wl,"),
		a == "-shared", a == "-static", a == "-rdynamic", a == "-pie", a == "-no-pie":
		return true
	case strings.HasPrefix(a, "-"):
		return false
	}
	ext := filepath.Ext(a)
	return ext == ".o" || ext == ".a" || ext == ".so" || strings.Contains(filepath.Base(a), ".so.")
}

// links reports whether the compiler will link (no -c, -E, -S, -M, and
// some input).
func links(args []string) bool {
	return len(args) > 0 && !slices.ContainsFunc(args, func(a string) bool {
		return a == "-c" || a == "-E" || a == "-S" || a == "-M" || a == "-MM" || a == "--version" || a == "-v"
	})
}

// prefixDir is the directory above the one holding this executable.
func prefixDir() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return "", err
	}
	return filepath.Dir(filepath.Dir(exe)), nil
}
