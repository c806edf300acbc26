// Command shmrun-install builds and installs shmrun for programs in any
// language: DIR/bin/shmrun (the launcher), DIR/bin/shmcc (the C compiler
// wrapper, also as mpicc_abi), DIR/lib/libmpi_abi.so (the MPI C interface
// on the MPI 5.0 standard ABI; soname libmpi_abi.so.1, as MPICH's ABI
// library) and DIR/include/mpi.h.
//
//	go run ./cmd/shmrun-install DIR
//
// Run it inside this module; it needs a C compiler (cgo).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// soname is the library's: the one MPICH's standard-ABI library has, so
// that programs linked against it load this one.
const soname = "libmpi_abi.so.1"

func main() {
	if len(os.Args) != 2 || os.Args[1] == "-h" || os.Args[1] == "--help" {
		fmt.Fprintln(os.Stderr, "usage: go run ./cmd/shmrun-install DIR")
		os.Exit(2)
	}
	if err := install(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "shmrun-install:", err)
		os.Exit(1)
	}
}

func install(dir string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	bin, lib, inc := filepath.Join(dir, "bin"), filepath.Join(dir, "lib"), filepath.Join(dir, "include")
	for _, d := range []string{bin, lib, inc} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	for _, c := range []string{"shmrun", "shmcc"} {
		if err := gobuild(root, "-o", filepath.Join(bin, c), "./cmd/"+c); err != nil {
			return err
		}
	}
	if err := relink(filepath.Join(bin, "mpicc_abi"), "shmcc"); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "shmrun-install-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	so := filepath.Join(tmp, soname)
	if err := gobuild(root, "-buildmode=c-shared", "-ldflags=-extldflags=-Wl,-soname,"+soname, "-o", so, "./capi"); err != nil {
		return err
	}
	if err := copyFile(filepath.Join(lib, soname), so, 0o755); err != nil {
		return err
	}
	if err := relink(filepath.Join(lib, "libmpi_abi.so"), soname); err != nil {
		return err
	}
	if err := copyFile(filepath.Join(inc, "mpi.h"), filepath.Join(root, "include", "abi", "mpi.h"), 0o644); err != nil {
		return err
	}
	fmt.Printf("installed shmrun into %s: bin/shmrun, bin/shmcc (and mpicc_abi), lib/%s, include/mpi.h\n", dir, soname)
	return nil
}

func moduleRoot() (string, error) {
	// The module named, not the main one: in a workspace (go.work) of
	// several modules, go list -m lists every one of them.
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", modulePath).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("finding the module %s (run inside the shmrun repository): %w", modulePath, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("finding the module %s: go list gave no directory (run inside the shmrun repository)", modulePath)
	}
	return dir, nil
}

// modulePath is this module's path (go.mod).
const modulePath = "github.com/shmrun/shmrun"

func gobuild(root string, args ...string) error {
	cmd := exec.Command("go", append([]string{"build"}, args...)...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %v: %w", args, err)
	}
	return nil
}

// relink makes link a symlink to target, replacing what was there.
func relink(link, target string) error {
	if err := os.Remove(link); err != nil && !os.IsNotExist(err) {
		return err
	}
	return os.Symlink(target, link)
}

// copyFile copies src to dst through a temporary name, so that a running
// program's library is never overwritten in place.
func copyFile(dst, src string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".new"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}
