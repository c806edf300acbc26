// Package ranktest runs a test's own binary as the ranks of a shmrun job, the
// way os/exec's tests run their binary as a helper process: cross-process
// behaviour is tested with real processes started by the real launcher.
//
// A test package registers rank bodies by name and hands its TestMain to
// Main:
//
//	func init() {
//		ranktest.Register("ring", func(c *comm.Comm) error { ... })
//	}
//
//	func TestMain(m *testing.M) { ranktest.Main(m) }
//
//	func TestRing(t *testing.T) {
//		res := ranktest.Run(t, 4, "ring")
//		... res.Stdout ...
//	}
//
// Run starts the binary as n ranks through launcher.Run with the environment
// variable EnvBody naming the body; in each rank Main sees the variable and,
// instead of running the tests, calls comm.Init, runs the body, and exits 0
// after comm.Finalize (or 1 with a message if the body or Finalize failed).
//
// Every job runs with a time limit (a hang fails the test instead of hanging
// CI), with its output captured, and in a shm directory of its own under
// /dev/shm (a tmpfs, like production), which Run checks afterwards: an
// object of the job left behind fails the test.
//
// It sits above launcher and comm, for tests only.
package ranktest
