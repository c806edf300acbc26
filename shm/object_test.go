package shm_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/shm"
)

// shmDir returns a fresh directory on the shm tmpfs (t.TempDir if there is
// none), removed when the test ends.
func shmDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp(shm.DefaultDir, "shm-test-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// mustCreate creates an object of size bytes under a fresh name in dir and
// closes it when the test ends.
func mustCreate(t testing.TB, dir string, size int64) *shm.Object {
	t.Helper()
	o, err := shm.Create(dir, format.ObjectName(format.NewJobID(), format.NewObjectID()), size)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

func TestCreateOpen(t *testing.T) {
	dir := shmDir(t)
	name := format.ObjectName(format.NewJobID(), "seg")
	o, err := shm.Create(dir, name, 8192)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	st, err := os.Lstat(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode() != 0o600 || st.Size() != 8192 {
		t.Errorf("created with mode %v, size %d; want -rw------- and 8192", st.Mode(), st.Size())
	}
	if size, err := o.Size(); err != nil || size != 8192 {
		t.Errorf("Size = %d, %v", size, err)
	}
	if _, err := shm.Create(dir, name, 8192); !errors.Is(err, os.ErrExist) {
		t.Errorf("Create of an existing name = %v, want ErrExist", err)
	}

	p, err := shm.Open(dir, name, 8192)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	a, err := o.Map(8192)
	if err != nil {
		t.Fatal(err)
	}
	defer shm.Unmap(a)
	b, err := p.Map(8192)
	if err != nil {
		t.Fatal(err)
	}
	defer shm.Unmap(b)
	a[5000] = 42
	if b[5000] != 42 {
		t.Error("a store through one mapping is not seen through the other")
	}

	if _, err := shm.Open(dir, name, 8193); !errors.Is(err, shm.ErrTruncated) {
		t.Errorf("Open with a larger minimum size = %v, want ErrTruncated", err)
	}
	if err := o.Unlink(); err != nil {
		t.Fatal(err)
	}
	if err := o.Unlink(); err != nil {
		t.Errorf("second Unlink: %v", err)
	}
	if _, err := shm.Open(dir, name, 0); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open after Unlink = %v, want ErrNotExist", err)
	}
	if b[5000] != 42 {
		t.Error("the mapping did not survive Unlink")
	}
	if err := o.Close(); err != nil || o.FD() != -1 {
		t.Errorf("Close: %v, fd %d", err, o.FD())
	}
	if err := o.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	var nilObj *shm.Object
	if nilObj.Close() != nil || nilObj.Unlink() != nil {
		t.Error("Close or Unlink of a nil object failed")
	}
}

// TestCreateIgnoresUmask: peers check for mode 0600, so Create sets it
// whatever the umask.
func TestCreateIgnoresUmask(t *testing.T) {
	old := syscall.Umask(0o777)
	defer syscall.Umask(old)
	dir := shmDir(t)
	o := mustCreate(t, dir, 1)
	if st, err := os.Stat(o.Path); err != nil || st.Mode() != 0o600 {
		t.Errorf("mode %v, %v; want -rw-------", st.Mode(), err)
	}
}

func TestCreateErrors(t *testing.T) {
	dir := shmDir(t)
	_, err := shm.Create(filepath.Join(dir, "missing"), format.ObjectName("ab", "cd"), 1)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "--shm-dir") {
		t.Errorf("Create in a missing directory = %v, want ErrNotExist with a --shm-dir hint", err)
	}
	for _, name := range []string{".", "..", "../shmrun.ab.cd", "shmrun.ab/cd", "shmrun.ab.cd/x", ""} {
		if _, err := shm.Create(dir, name, 1); err == nil {
			t.Errorf("Create(%q) accepted the name", name)
		}
		if _, err := shm.Open(dir, name, 0); err == nil {
			t.Errorf("Open(%q) accepted the name", name)
		}
	}
	if _, err := shm.Create(dir, format.ObjectName("ab", "neg"), -1); err == nil {
		t.Error("Create with a negative size succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, format.ObjectName("ab", "neg"))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed Create left its name: %v", err)
	}
}

func TestOpenRefusesForeignObjects(t *testing.T) {
	dir := shmDir(t)
	write := func(name string, mode os.FileMode) string {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, 4096), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, name), mode); err != nil {
			t.Fatal(err)
		}
		return name
	}
	wide := write(format.ObjectName("ab", "wide"), 0o644)
	if _, err := shm.Open(dir, wide, 0); !errors.Is(err, shm.ErrForeign) {
		t.Errorf("Open of a 0644 object = %v, want ErrForeign", err)
	}
	good := write(format.ObjectName("ab", "good"), 0o600)
	link := format.ObjectName("ab", "link")
	if err := os.Symlink(filepath.Join(dir, good), filepath.Join(dir, link)); err != nil {
		t.Fatal(err)
	}
	if _, err := shm.Open(dir, link, 0); !errors.Is(err, unix.ELOOP) {
		t.Errorf("Open of a symbolic link = %v, want ELOOP", err)
	}
	if err := os.Mkdir(filepath.Join(dir, format.ObjectName("ab", "dir")), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := shm.Open(dir, format.ObjectName("ab", "dir"), 0); err == nil {
		t.Error("Open of a directory succeeded")
	}
	if os.Geteuid() == 0 {
		theirs := write(format.ObjectName("ab", "theirs"), 0o600)
		if err := os.Chown(filepath.Join(dir, theirs), 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if _, err := shm.Open(dir, theirs, 0); !errors.Is(err, shm.ErrForeign) {
			t.Errorf("Open of another user's object = %v, want ErrForeign", err)
		}
	}
}

func TestMemfd(t *testing.T) {
	for _, inherit := range []bool{false, true} {
		o, err := shm.NewMemfd("shm-test", 3*shm.PageSize, inherit)
		if err != nil {
			t.Fatal(err)
		}
		if o.Path != "" {
			t.Errorf("memfd has a path %q", o.Path)
		}
		flags, err := unix.FcntlInt(uintptr(o.FD()), unix.F_GETFD, 0)
		if err != nil || (flags&unix.FD_CLOEXEC == 0) != inherit {
			t.Errorf("inherit=%v: fd flags %#x, %v", inherit, flags, err)
		}
		if err := o.SetCloseOnExec(); err != nil {
			t.Error(err)
		}
		if flags, _ := unix.FcntlInt(uintptr(o.FD()), unix.F_GETFD, 0); flags&unix.FD_CLOEXEC == 0 {
			t.Error("SetCloseOnExec did not set FD_CLOEXEC")
		}
		p, err := shm.FromFD(o.FD(), 3*shm.PageSize)
		if err != nil {
			t.Errorf("FromFD of a memfd: %v", err)
		}
		if _, err := shm.FromFD(o.FD(), 3*shm.PageSize+1); !errors.Is(err, shm.ErrTruncated) {
			t.Errorf("FromFD with a larger minimum = %v, want ErrTruncated", err)
		}
		if size, err := p.Size(); err != nil || size != 3*shm.PageSize {
			t.Errorf("Size = %d, %v", size, err)
		}
		o.Close()
	}
	if _, err := shm.NewMemfd("shm-test", -1, false); err == nil {
		t.Error("NewMemfd with a negative size succeeded")
	}
}

func TestFromFDRefusesOtherFiles(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if _, err := shm.FromFD(int(r.Fd()), 0); !errors.Is(err, shm.ErrForeign) {
		t.Errorf("FromFD of a pipe = %v, want ErrForeign", err)
	}
	if _, err := shm.FromFD(1<<20-1, 0); err == nil {
		t.Error("FromFD of a closed descriptor succeeded")
	}
}

func TestMapErrors(t *testing.T) {
	o := mustCreate(t, shmDir(t), 4096)
	if _, err := o.Map(0); err == nil {
		t.Error("Map(0) succeeded")
	}
	if _, err := o.Map(-1); err == nil {
		t.Error("Map(-1) succeeded")
	}
	if err := shm.Unmap(nil); err != nil {
		t.Errorf("Unmap(nil): %v", err)
	}
}
