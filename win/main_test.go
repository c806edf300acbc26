package win_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
)

func TestMain(m *testing.M) { ranktest.Main(m) }

// runLocal runs body as the n goroutine ranks of a heap-backed world: the
// mode in which the race detector sees every shared access.
func runLocal(t testing.TB, n int, body func(c *comm.Comm) error) {
	t.Helper()
	cs, err := comm.NewLocalWorld(n)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = body(c)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// check returns an error naming what differs.
func check(cond bool, format string, args ...any) error {
	if cond {
		return nil
	}
	return fmt.Errorf(format, args...)
}

func isClass(err, class error) bool { return errors.Is(err, class) }
