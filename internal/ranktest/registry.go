package ranktest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shmrun/shmrun/comm"
)

// EnvBody names the registered body a rank runs. The launcher does not pass
// its own SHMRUN_* variables on to ranks, so Run sets this one through
// launcher.Config.Env; a job started by the shmrun CLI sets it with
// env(1): `shmrun -n 2 env SHMRUN_TEST_BODY=name /path/to/pkg.test`.
const EnvBody = "SHMRUN_TEST_BODY"

// ExitFailed is a rank's exit code when its body or comm.Init or
// comm.Finalize returned an error.
const ExitFailed = 1

// DefaultTimeout bounds a job started by Run unless Timeout says otherwise.
const DefaultTimeout = 60 * time.Second

type entry struct {
	body func(c *comm.Comm) error // run between comm.Init and comm.Finalize
	main func() int               // or run as the whole program
}

// The registry is filled by init functions (or TestMain before Main) and
// only read afterwards.
var registry = map[string]entry{}

// Register makes body runnable as a rank under name. In the rank, Main calls
// comm.Init, runs body with the world, and exits 0 after comm.Finalize. A
// body that returns an error makes the rank print it on stderr and exit
// ExitFailed without Finalize; a body may also end the process itself
// (os.Exit, comm.Abort, a signal) to test those paths. Register panics on a
// duplicate name. Call it from an init function.
func Register(name string, body func(c *comm.Comm) error) {
	register(name, entry{body: body})
}

// RegisterMain makes main runnable as a rank under name without comm.Init: a
// plain program that the launcher starts (ranks that never call Init are
// legal), whose return value is the exit code.
func RegisterMain(name string, main func() int) {
	register(name, entry{main: main})
}

func register(name string, e entry) {
	if _, dup := registry[name]; dup {
		panic("ranktest: body " + name + " registered twice")
	}
	registry[name] = e
}

// Main runs the tests, or, in a process started by Run (EnvBody is set), the
// rank body it names. Call it from TestMain.
func Main(m *testing.M) {
	if name, ok := os.LookupEnv(EnvBody); ok {
		os.Exit(runRank(name))
	}
	os.Exit(m.Run())
}

// IsRank reports whether this process runs as a rank (for a TestMain that
// does more than call Main).
func IsRank() bool {
	_, ok := os.LookupEnv(EnvBody)
	return ok
}

func runRank(name string) int {
	e, ok := registry[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "ranktest: no body registered as %q\n", name)
		return ExitFailed
	}
	if e.main != nil {
		return e.main()
	}
	c, err := comm.Init()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ranktest: body %s: %v\n", name, err)
		return ExitFailed
	}
	if err := e.body(c); err != nil {
		fmt.Fprintf(os.Stderr, "ranktest: body %s: rank %d: %v\n", name, c.Rank(), err)
		return ExitFailed
	}
	if err := comm.Finalize(); err != nil {
		fmt.Fprintf(os.Stderr, "ranktest: body %s: rank %d: %v\n", name, c.Rank(), err)
		return ExitFailed
	}
	return 0
}

// BodyArgs returns the arguments a rank was started with (after the program
// name): what the Args option passed to Run, or a part's arguments in an
// MPMD job.
func BodyArgs() []string { return os.Args[1:] }

// Program is the path of the running test binary: the program Run starts.
// Use it to build launcher.Config parts by hand (MPMD jobs).
func Program() string {
	p, err := os.Executable()
	if err != nil {
		p, _ = filepath.Abs(os.Args[0])
	}
	return p
}

// raceOptions keeps the GORACE options of the test and drops the race
// runtime's one-second sleep at a successful exit (atexit_sleep_ms), which
// would otherwise add a second to every job of a -race test run. It has no
// effect on binaries built without -race.
func raceOptions() string {
	return strings.TrimSpace("GORACE=" + os.Getenv("GORACE") + " atexit_sleep_ms=0")
}

// optionsOf applies opts over the defaults, with the timeout shortened to
// leave the test time to report a failure itself before its deadline.
func optionsOf(t testing.TB, opts []Option) options {
	o := options{common: common{timeout: DefaultTimeout}}
	for _, opt := range opts {
		opt(&o)
	}
	if dl, ok := deadline(t); ok {
		if left := time.Until(dl) * 9 / 10; left < o.timeout {
			o.timeout = max(left, time.Second)
		}
	}
	return o
}

func deadline(t testing.TB) (time.Time, bool) {
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		return d.Deadline()
	}
	return time.Time{}, false
}

// tail keeps the end of long output for failure messages.
func tail(s string) string {
	const max = 8 << 10
	if len(s) <= max {
		return s
	}
	return "...\n" + s[len(s)-max:]
}

// syncBuffer is a bytes.Buffer that ranks' output copiers may write
// concurrently.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Option adjusts a job started by Run.
type Option func(*options)

// common holds the options of both backends' Run.
type common struct {
	timeout  time.Duration
	env      []string
	args     []string
	exitCode int
	anyExit  bool
}

// Timeout bounds the job: when it fires the ranks are killed (under
// shmrun the job exits launcher.TimeoutExitCode). The default is
// DefaultTimeout, shortened to fit the test's own deadline.
func Timeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// Env adds NAME=VALUE pairs to every rank's environment.
func Env(kv ...string) Option { return func(o *options) { o.env = append(o.env, kv...) } }

// Args passes arguments to every rank (see BodyArgs).
func Args(args ...string) Option { return func(o *options) { o.args = append(o.args, args...) } }

// ExitCode is the exit code the job must end with (default 0); Run fails the
// test otherwise.
func ExitCode(code int) Option { return func(o *options) { o.exitCode, o.anyExit = code, false } }

// AnyExitCode lets the job end with any exit code; the caller checks it.
func AnyExitCode() Option { return func(o *options) { o.anyExit = true } }

// RunEach runs each named body as a job of each rank count (a subtest
// "body/n"), under the backend the test binary was built for, and fails
// the subtest unless every rank printed exactly one line: the backends'
// shared test bodies each end with one "rank r ok" line.
func RunEach(t *testing.T, bodies []string, counts []int) {
	t.Helper()
	for _, body := range bodies {
		for _, n := range counts {
			t.Run(fmt.Sprintf("%s/%d", body, n), func(t *testing.T) {
				res := Run(t, n, body)
				if got := len(res.Lines()); got != n {
					t.Fatalf("%d lines of output, want one a rank:\n%s", got, res.Stdout)
				}
			})
		}
	}
}

// Want is nil if got and exp print the same (fmt.Sprint), else an error
// naming what.
func Want(what string, got, exp any) error {
	if fmt.Sprint(got) != fmt.Sprint(exp) {
		return fmt.Errorf("%s = %v, want %v", what, got, exp)
	}
	return nil
}

// WantErr is nil if err is of class (errors.Is), else an error naming
// what.
func WantErr(what string, err, class error) error {
	if !errors.Is(err, class) {
		return fmt.Errorf("%s: error %v, want %v", what, err, class)
	}
	return nil
}
