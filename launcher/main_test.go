package launcher_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/shm"
)

func TestMain(m *testing.M) { ranktest.Main(m) }

// Rank bodies. Each reads its parameters from ranktest.BodyArgs().

func init() {
	// barriers: args rounds. Every rank says who it is, then passes rounds
	// barriers; around each it publishes its round in a shared block and,
	// once through, checks that every peer has reached the same barrier
	// (k) and is at most one round ahead (k+1): nobody was let through
	// early.
	ranktest.Register("barriers", func(c *comm.Comm) error {
		rounds, err := strconv.Atoi(ranktest.BodyArgs()[0])
		if err != nil {
			return err
		}
		fmt.Printf("rank %d of %d env %s/%s\n", c.Rank(), c.Size(), os.Getenv(comm.EnvRank), os.Getenv(comm.EnvSize))
		n := c.Size()
		mem, unmap, err := ranktest.MapShared(c, "rounds", n*shm.CacheLine)
		if err != nil {
			return err
		}
		defer unmap()
		word := func(r int) *uint64 { return raw.Uint64At(mem, int64(r)*shm.CacheLine) }
		me := word(c.Rank())
		for k := uint64(1); k <= uint64(rounds); k++ {
			atomic.StoreUint64(me, k)
			if err := c.Barrier(); err != nil {
				return fmt.Errorf("barrier %d: %w", k, err)
			}
			for p := range n {
				if got := atomic.LoadUint64(word(p)); got < k || got > k+1 {
					return fmt.Errorf("after barrier %d, rank %d is at round %d: the barrier let rank %d through early", k, p, got, c.Rank())
				}
			}
		}
		return nil
	})

	// fail: args rank how [code]. After a first barrier, rank `rank` fails
	// (how: exit, segv, abort, nofinalize), printing the time first; the
	// others wait in a barrier, and once told the job is aborting they
	// ignore SIGTERM and hang, so only the launcher's SIGKILL ends them.
	ranktest.Register("fail", func(c *comm.Comm) error {
		args := ranktest.BodyArgs()
		who, _ := strconv.Atoi(args[0])
		how := args[1]
		code := 0
		if len(args) > 2 {
			code, _ = strconv.Atoi(args[2])
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		if c.Rank() == who {
			fmt.Printf("failing at %d\n", time.Now().UnixNano())
			switch how {
			case "exit":
				os.Exit(code)
			case "segv":
				dieBySignal(syscall.SIGSEGV)
			case "abort":
				c.Abort(code)
			case "nofinalize":
				os.Exit(0)
			}
			return fmt.Errorf("unknown failure %q", how)
		}
		signal.Ignore(syscall.SIGTERM)
		err := c.Barrier()
		if !errors.Is(err, comm.ErrAborted) {
			return fmt.Errorf("barrier with a failed peer returned %v, want ErrAborted", err)
		}
		fmt.Printf("rank %d saw the abort\n", c.Rank())
		time.Sleep(time.Hour)
		return nil
	})

	// hang: every rank says "ready <pid>" and then sleeps: rank 0 outside
	// any barrier, the others in one.
	ranktest.Register("hang", func(c *comm.Comm) error {
		if err := c.Barrier(); err != nil {
			return err
		}
		fmt.Printf("ready %d\n", os.Getpid())
		if c.Rank() == 0 {
			time.Sleep(time.Hour)
		}
		return c.Barrier()
	})

	// spawnexit: rank 1 starts a child that holds its stdout and stderr
	// for a minute, then exits 7; the others wait in a barrier.
	ranktest.Register("spawnexit", func(c *comm.Comm) error {
		if err := c.Barrier(); err != nil {
			return err
		}
		if c.Rank() == 1 {
			cmd := exec.Command("sleep", "60")
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
			if err := cmd.Start(); err != nil {
				return err
			}
			fmt.Println("rank 1 leaves its child behind")
			os.Exit(7)
		}
		return c.Barrier()
	})

	// usr1: every rank says "ready <pid>" and waits for SIGUSR1.
	ranktest.Register("usr1", func(c *comm.Comm) error {
		got := make(chan os.Signal, 1)
		signal.Notify(got, syscall.SIGUSR1)
		if err := c.Barrier(); err != nil {
			return err
		}
		fmt.Printf("ready %d\n", os.Getpid())
		select {
		case <-got:
			fmt.Printf("rank %d got SIGUSR1\n", c.Rank())
			return nil
		case <-time.After(time.Minute):
			return errors.New("no SIGUSR1 within a minute")
		}
	})

	// lines: args count length. Every rank prints count lines of length
	// bytes, each written in pieces to provoke interleaving.
	ranktest.Register("lines", func(c *comm.Comm) error {
		count, _ := strconv.Atoi(ranktest.BodyArgs()[0])
		length, _ := strconv.Atoi(ranktest.BodyArgs()[1])
		for i := range count {
			line := []byte(tagLine(c.Rank(), i, length) + "\n")
			for len(line) > 0 {
				k := min(len(line), 1+len(line)/3)
				if _, err := os.Stdout.Write(line[:k]); err != nil {
					return err
				}
				line = line[k:]
				runtime.Gosched()
			}
		}
		return nil
	})

	// env: prints NAME=value for each NAME in args.
	ranktest.Register("env", func(c *comm.Comm) error {
		for _, name := range ranktest.BodyArgs() {
			v, ok := os.LookupEnv(name)
			fmt.Printf("rank %d %s=%s set=%v\n", c.Rank(), name, v, ok)
		}
		return nil
	})

	// affinity: prints the CPUs this rank may run on.
	ranktest.Register("affinity", func(c *comm.Comm) error {
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(0, &set); err != nil {
			return err
		}
		var cpus []string
		for i := 0; len(cpus) < set.Count(); i++ {
			if set.IsSet(i) {
				cpus = append(cpus, strconv.Itoa(i))
			}
		}
		fmt.Printf("rank %d cpus %s\n", c.Rank(), strings.Join(cpus, ","))
		return nil
	})

	// part: prints its rank and its argument (which MPMD part it is).
	ranktest.Register("part", func(c *comm.Comm) error {
		fmt.Printf("rank %d of %d part %s\n", c.Rank(), c.Size(), strings.Join(ranktest.BodyArgs(), " "))
		return nil
	})

	// stdin: prints what the rank read on its standard input.
	ranktest.Register("stdin", func(c *comm.Comm) error {
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			return err
		}
		fmt.Printf("rank %d stdin %q\n", c.Rank(), b)
		return nil
	})

	// fds: a plain program that lists its open descriptors that are
	// memfds ("fd N memfd:NAME").
	ranktest.RegisterMain("fds", func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		for _, e := range ents {
			if l, _ := os.Readlink("/proc/self/fd/" + e.Name()); strings.HasPrefix(l, "/memfd:") {
				fmt.Printf("fd %s %s\n", e.Name(), strings.TrimSuffix(strings.TrimPrefix(l, "/"), " (deleted)"))
			}
		}
		return 0
	})

	// plain: a program that never calls comm.Init.
	ranktest.RegisterMain("plain", func() int {
		fmt.Printf("plain rank %s\n", os.Getenv(comm.EnvRank))
		return 0
	})
}

// tagLine is line i of rank's output in the lines body: recognizable, so a
// torn or interleaved line cannot pass for a whole one.
func tagLine(rank, i, length int) string {
	head := fmt.Sprintf("r%d-l%d:", rank, i)
	return head + strings.Repeat(string(rune('a'+rank%26)), max(0, length-len(head)))
}

// dieBySignal ends the process by sig as an uncaught signal would: the Go
// runtime turns a SIGSEGV into a panic (exit 2), so first restore the
// kernel's default action, then raise it.
func dieBySignal(sig syscall.Signal) {
	// struct kernel_sigaction {handler, flags, restorer, mask}: all zero is
	// SIG_DFL with an empty mask on amd64 and arm64.
	var sa [4]uint64
	if _, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&sa)), 0, 8, 0, 0); e != 0 {
		fmt.Fprintf(os.Stderr, "rt_sigaction: %v\n", e)
		os.Exit(99)
	}
	_ = syscall.Kill(os.Getpid(), sig)
	time.Sleep(time.Hour) // the signal is delivered before this returns
}
