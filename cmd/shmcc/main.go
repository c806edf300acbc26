// Command shmcc compiles and links C programs against shmrun's MPI library
// (libmpi_abi, the MPI 5.0 standard ABI): it runs the C compiler with the
// include path of mpi.h, and, when linking, the library and an rpath to it.
//
//	shmcc [compiler arguments...]      e.g. shmcc prog.c -o prog
//	shmcc -show [compiler arguments...] print the command instead
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
)

func main() {
	args := os.Args[1:]
	show := len(args) > 0 && args[0] == "-show"
	if show {
		args = args[1:]
	}
	cmd, err := command(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "shmcc:", err)
		os.Exit(2)
	}
	if show {
		fmt.Println(strings.Join(cmd, " "))
		return
	}
	path, err := exec.LookPath(cmd[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "shmcc:", err)
		os.Exit(2)
	}
	err = syscall.Exec(path, cmd, os.Environ())
	fmt.Fprintln(os.Stderr, "shmcc:", err)
	os.Exit(2)
}

// command is the compiler command for args.
func command(args []string) ([]string, error) {
	prefix, err := prefixDir()
	if err != nil {
		return nil, err
	}
	inc, lib := filepath.Join(prefix, "include"), filepath.Join(prefix, "lib")
	if _, err := os.Stat(filepath.Join(inc, "mpi.h")); err != nil {
		return nil, fmt.Errorf("no mpi.h in %s: install with go run ./cmd/shmrun-install DIR and run DIR/bin/shmcc", inc)
	}
	cc := os.Getenv("SHMCC_CC")
	if cc == "" {
		cc = "cc"
	}
	cmd := append([]string{cc, "-I" + inc}, args...)
	if links(args) {
		cmd = append(cmd, "-L"+lib, "-Wl,-rpath,"+lib, "-lmpi_abi")
	}
	return cmd, nil
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
