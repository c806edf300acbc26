package ranktest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/launcher"
	"github.com/shmrun/shmrun/shm"
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

// Result is how a job started by Run ended, with everything it printed.
type Result struct {
	launcher.Result
	Stdout, Stderr string
	ShmDir         string // the job's shm directory (removed when Run returns, unless chosen with the ShmDir option)
}

// Lines returns the job's standard output split into lines.
func (r Result) Lines() []string {
	s := strings.TrimSuffix(r.Stdout, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// Option adjusts a job started by Run.
type Option func(*options)

type options struct {
	timeout   time.Duration
	env       []string
	args      []string
	stdin     io.Reader
	shmDir    string
	exitCode  int
	anyExit   bool
	configure []func(*launcher.Config)
}

// Timeout bounds the job (launcher.Config.Timeout): when it fires the ranks
// are killed and the job exits launcher.TimeoutExitCode. The default is
// DefaultTimeout, shortened to fit the test's own deadline.
func Timeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// Env adds NAME=VALUE pairs to every rank's environment.
func Env(kv ...string) Option { return func(o *options) { o.env = append(o.env, kv...) } }

// Args passes arguments to every rank (see BodyArgs).
func Args(args ...string) Option { return func(o *options) { o.args = append(o.args, args...) } }

// Stdin is what rank 0 reads on its standard input (default: nothing).
func Stdin(r io.Reader) Option { return func(o *options) { o.stdin = r } }

// ShmDir runs the job in dir instead of a fresh directory under /dev/shm.
// Run then checks that the job leaves no shmrun.* object in dir that was not
// there before it started.
func ShmDir(dir string) Option { return func(o *options) { o.shmDir = dir } }

// ExitCode is the exit code the job must end with (default 0); Run fails the
// test otherwise.
func ExitCode(code int) Option { return func(o *options) { o.exitCode, o.anyExit = code, false } }

// AnyExitCode lets the job end with any exit code; the caller checks it.
func AnyExitCode() Option { return func(o *options) { o.anyExit = true } }

// Configure edits the launcher configuration last, after Run has filled it
// in: for MPMD parts, TagOutput, BindTo, Signals, Grace, or to wrap Stdout.
func Configure(f func(*launcher.Config)) Option {
	return func(o *options) { o.configure = append(o.configure, f) }
}

// Run starts the test binary as n ranks running the body registered as
// body, waits for the job to end, and returns how it ended. It fails the
// test (t.Fatal: call it from the test's goroutine) if the job cannot be
// launched or ends with another exit code than expected (0 unless
// ExitCode or AnyExitCode say otherwise), showing the job's output; it marks
// the test failed (t.Error) if the job left a shmrun.* object behind, and
// removes it.
func Run(t testing.TB, n int, body string, opts ...Option) Result {
	t.Helper()
	o := options{timeout: DefaultTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	if dl, ok := deadline(t); ok {
		// Leave the test time to report the failure itself.
		if left := time.Until(dl) * 9 / 10; left < o.timeout {
			o.timeout = max(left, time.Second)
		}
	}
	var stdout, stderr syncBuffer
	cfg := launcher.Config{
		Parts:         []launcher.Part{{N: n, Prog: Program(), Args: o.args}},
		Oversubscribe: true,
		Timeout:       o.timeout,
		Env:           append([]string{EnvBody + "=" + body, raceOptions()}, o.env...),
		Stdin:         o.stdin,
		Stdout:        &stdout,
		Stderr:        &stderr,
	}
	if cfg.Stdin == nil {
		cfg.Stdin = strings.NewReader("")
	}
	if o.shmDir != "" {
		cfg.ShmDir = o.shmDir
	} else {
		cfg.ShmDir = jobDir(t)
		defer os.RemoveAll(cfg.ShmDir) // after the checks below
	}
	for _, f := range o.configure {
		f(&cfg)
	}
	before := objects(t, cfg.ShmDir)

	// A backstop in case the launcher itself hangs past its own timeout.
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout+cfg.Grace+launcher.DefaultGrace+30*time.Second)
	defer cancel()
	lres, err := launcher.Run(ctx, cfg)
	res := Result{Result: lres, Stdout: stdout.String(), Stderr: stderr.String(), ShmDir: cfg.ShmDir}
	if err != nil {
		t.Fatalf("ranktest: launching %d rank(s) of %s: %v\nstderr:\n%s", n, body, err, tail(res.Stderr))
	}

	var left []string
	for _, name := range objects(t, cfg.ShmDir) {
		if !slices.Contains(before, name) {
			left = append(left, name)
			_ = os.Remove(filepath.Join(cfg.ShmDir, name))
		}
	}
	if len(left) > 0 {
		t.Errorf("ranktest: job %s left %d object(s) in %s: %v", body, len(left), cfg.ShmDir, left)
	}
	if !o.anyExit && res.ExitCode != o.exitCode {
		t.Fatalf("ranktest: job %s of %d rank(s) exited %d, want %d (%s)\nstdout:\n%s\nstderr:\n%s",
			body, n, res.ExitCode, o.exitCode, res.Reason, tail(res.Stdout), tail(res.Stderr))
	}
	return res
}

// raceOptions keeps the GORACE options of the test and drops the race
// runtime's one-second sleep at a successful exit (atexit_sleep_ms), which
// would otherwise add a second to every job of a -race test run. It has no
// effect on binaries built without -race.
func raceOptions() string {
	return strings.TrimSpace("GORACE=" + os.Getenv("GORACE") + " atexit_sleep_ms=0")
}

func deadline(t testing.TB) (time.Time, bool) {
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		return d.Deadline()
	}
	return time.Time{}, false
}

// jobDir makes a directory of the job's own on the shm tmpfs, so that what
// the job leaves behind is told apart from what concurrent tests of other
// packages create. Without a usable /dev/shm it falls back to t.TempDir.
func jobDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp(shm.DefaultDir, "ranktest-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// objects lists the shmrun.* names in dir.
func objects(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("ranktest: listing the shm directory: %v", err)
	}
	var names []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), format.Prefix) {
			names = append(names, e.Name())
		}
	}
	return names
}

// Objects lists the shmrun.* names in dir, for tests that check cleanup
// themselves.
func Objects(t testing.TB, dir string) []string {
	t.Helper()
	return objects(t, dir)
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
