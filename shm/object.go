package shm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// DefaultDir is where segments are created unless told otherwise.
const DefaultDir = "/dev/shm"

// Object is an open shared-memory object: a file in the shm directory (or a
// memfd, which has no name). Close is safe to call twice.
type Object struct {
	Path string // "" for a memfd
	fd   int
}

// FD returns the object's file descriptor (-1 once closed).
func (o *Object) FD() int { return o.fd }

// Create makes a new object dir/name with O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600,
// and sets its size. An existing name is an error (os.ErrExist), never reused.
func Create(dir, name string, size int64) (*Object, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, name)
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("shm: create %s: %w", path, dirHint(dir, err))
	}
	o := &Object{Path: path, fd: fd}
	// The umask may have narrowed the mode; 0600 is what peers check for.
	if err := unix.Fchmod(fd, 0o600); err != nil {
		o.Close()
		_ = unix.Unlink(path)
		return nil, fmt.Errorf("shm: chmod %s: %w", path, err)
	}
	if err := unix.Ftruncate(fd, size); err != nil {
		o.Close()
		_ = unix.Unlink(path)
		return nil, fmt.Errorf("shm: size %s to %d bytes: %w", path, size, err)
	}
	return o, nil
}

// Open opens an existing object dir/name made by a peer of the same job. It
// refuses symbolic links, objects of another owner, modes other than 0600 and
// objects smaller than minSize.
func Open(dir, name string, minSize int64) (*Object, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, name)
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("shm: open %s: %w", path, err)
	}
	o := &Object{Path: path, fd: fd}
	if err := o.check(minSize); err != nil {
		o.Close()
		return nil, err
	}
	return o, nil
}

// FromFD wraps an inherited descriptor (the control memfd) after checking it
// the way Open checks a named object.
func FromFD(fd int, minSize int64) (*Object, error) {
	o := &Object{fd: fd}
	if err := o.check(minSize); err != nil {
		return nil, err
	}
	return o, nil
}

// ErrForeign marks an object that is not ours to map: wrong type, owner or mode.
var ErrForeign = errors.New("not a shmrun object")

func (o *Object) check(minSize int64) error {
	var st unix.Stat_t
	if err := unix.Fstat(o.fd, &st); err != nil {
		return fmt.Errorf("shm: stat %s: %w", o.describe(), err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("shm: %s is not a regular file: %w", o.describe(), ErrForeign)
	}
	if st.Uid != uint32(os.Geteuid()) {
		return fmt.Errorf("shm: %s is owned by uid %d, not %d: %w", o.describe(), st.Uid, os.Geteuid(), ErrForeign)
	}
	if o.Path != "" && st.Mode&0o777 != 0o600 {
		return fmt.Errorf("shm: %s has mode %#o, want 0600: %w", o.describe(), st.Mode&0o777, ErrForeign)
	}
	if st.Size < minSize {
		return fmt.Errorf("shm: %s is %d bytes, want at least %d: %w", o.describe(), st.Size, minSize, ErrTruncated)
	}
	return nil
}

func (o *Object) describe() string {
	if o.Path == "" {
		return fmt.Sprintf("fd %d", o.fd)
	}
	return o.Path
}

// Size returns the object's current size in bytes.
func (o *Object) Size() (int64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(o.fd, &st); err != nil {
		return 0, fmt.Errorf("shm: stat %s: %w", o.describe(), err)
	}
	return st.Size, nil
}

// Close closes the descriptor; the mapping and the name stay. Safe twice.
func (o *Object) Close() error {
	if o == nil || o.fd < 0 {
		return nil
	}
	err := unix.Close(o.fd)
	o.fd = -1
	return err
}

// Unlink removes the object's name; mappings stay valid. Safe twice.
func (o *Object) Unlink() error {
	if o == nil || o.Path == "" {
		return nil
	}
	err := unix.Unlink(o.Path)
	if errors.Is(err, unix.ENOENT) {
		err = nil
	}
	return err
}

// NewMemfd creates an anonymous object (memfd) of the given size. It has no
// name, so nothing can leak; it is close-on-exec unless inherit is set.
func NewMemfd(label string, size int64, inherit bool) (*Object, error) {
	flags := unix.MFD_CLOEXEC
	if inherit {
		flags = 0
	}
	fd, err := unix.MemfdCreate(label, flags)
	if err != nil {
		return nil, fmt.Errorf("shm: memfd_create: %w", err)
	}
	if err := unix.Ftruncate(fd, size); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("shm: size memfd to %d bytes: %w", size, err)
	}
	return &Object{fd: fd}, nil
}

// SetCloseOnExec marks the descriptor close-on-exec (once an inherited
// descriptor is mapped, children of the rank must not inherit it).
func (o *Object) SetCloseOnExec() error {
	_, err := unix.FcntlInt(uintptr(o.fd), unix.F_SETFD, unix.FD_CLOEXEC)
	return err
}

// checkName accepts a plain file name: not empty, not . or .., no slash
// (an object lives directly in its directory).
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.Contains(name, "/") {
		return fmt.Errorf("shm: bad object name %q: want a file name in the shm directory: %w", name, ErrSize)
	}
	return nil
}

func dirHint(dir string, err error) error {
	if errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("%w (does the directory %s exist? set another with --shm-dir)", err, dir)
	}
	return err
}

// Ino returns the object's inode number: with its device it names the
// object, so a process that opens it again (by /proc/pid/fd, whose numbers
// are reused once closed) can check it has the same one.
func (o *Object) Ino() (uint64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(o.fd, &st); err != nil {
		return 0, fmt.Errorf("shm: stat %s: %w", o.describe(), err)
	}
	return st.Ino, nil
}
