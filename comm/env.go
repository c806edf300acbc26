//go:build !mpi

package comm

import (
	"fmt"
	"strconv"

	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/shm"
)

// Environment variables set by the launcher for each rank (their one
// definition is in internal/format).
const (
	EnvJob       = format.EnvJob       // job id (hex)
	EnvRank      = format.EnvRank      // this rank, 0..size-1
	EnvSize      = format.EnvSize      // number of ranks
	EnvLocalRank = format.EnvLocalRank // rank among the ranks on this node (= rank)
	EnvAppNum    = format.EnvAppNum    // number of the rank's program on the launcher's command line (MPI_APPNUM)
	EnvControlFD = format.EnvControlFD // inherited descriptor of the control segment
	EnvShmDir    = format.EnvShmDir    // directory for window segments
	EnvShm       = format.EnvShm       // window backing: auto, dir or memfd
	// EnvWait tunes how ranks wait (barrier.ParsePolicy), for this rank
	// alone: "spin=N,yield=DURATION,sleep=DURATION".
	EnvWait = format.EnvWait
)

// rankEnv is what a rank learns from its environment.
type rankEnv struct {
	singleton    bool
	job          string
	rank, size   int
	localRank    int
	appNum       int  // MPI_APPNUM, if appSet
	appSet       bool // EnvAppNum was set (not in a singleton)
	controlFD    int
	dir          string
	backing      format.Backing
	policy       barrier.Policy
	noSingleCopy bool // EnvSingleCopy=off: ranks must not read each other's memory
}

// parseEnv reads the rank's environment through get. No SHMRUN_JOB means a
// singleton; with it, every other variable must be present and well formed.
func parseEnv(get func(string) string) (rankEnv, error) {
	e := rankEnv{dir: shm.DefaultDir}
	p, err := barrier.ParsePolicy(get(EnvWait))
	if err != nil {
		return e, fmt.Errorf("comm: %s: %v: %w", EnvWait, err, ErrInit)
	}
	e.policy = p
	if d := get(EnvShmDir); d != "" {
		if d[0] != '/' {
			return e, fmt.Errorf("comm: %s=%q is not an absolute path: %w", EnvShmDir, d, ErrInit)
		}
		e.dir = d
	}
	// The record directories of --stats and --trace (internal/obs reads
	// them at start): the launcher gives absolute ones; a relative one
	// (a stray SHMRUN_STATS=1) would fail only at Finalize, once the
	// program's work is done.
	for _, k := range []string{format.EnvStats, format.EnvTrace} {
		if d := get(k); d != "" && d[0] != '/' {
			return e, fmt.Errorf("comm: %s=%q is not an absolute path (shmrun --stats and --trace set it): %w", k, d, ErrInit)
		}
	}
	if e.backing, err = format.ParseBacking(get(EnvShm)); err != nil {
		return e, fmt.Errorf("comm: %s: %v: %w", EnvShm, err, ErrInit)
	}
	switch v := get(format.EnvSingleCopy); v {
	case "", "on":
	case "off":
		e.noSingleCopy = true
	default:
		return e, fmt.Errorf("comm: %s=%q: want on or off: %w", format.EnvSingleCopy, v, ErrInit)
	}
	e.job = get(EnvJob)
	if e.job == "" {
		for _, k := range []string{EnvRank, EnvSize, EnvControlFD, EnvAppNum} {
			if get(k) != "" {
				return e, fmt.Errorf("comm: %s is set but %s is not: %w", k, EnvJob, ErrInit)
			}
		}
		e.singleton, e.size, e.controlFD = true, 1, -1
		return e, nil
	}
	if !format.ValidJobID(e.job) {
		return e, fmt.Errorf("comm: %s=%q is not a job id (hex, at most 64 characters): %w", EnvJob, e.job, ErrInit)
	}
	if e.size, err = intVar(get, EnvSize, 1, format.MaxRanks); err != nil {
		return e, err
	}
	if e.rank, err = intVar(get, EnvRank, 0, e.size-1); err != nil {
		return e, err
	}
	e.localRank = e.rank
	if get(EnvLocalRank) != "" {
		if e.localRank, err = intVar(get, EnvLocalRank, 0, e.size-1); err != nil {
			return e, err
		}
	}
	if get(EnvAppNum) != "" {
		// Each program has a rank at least: fewer programs than ranks.
		if e.appNum, err = intVar(get, EnvAppNum, 0, e.size-1); err != nil {
			return e, err
		}
		e.appSet = true
	}
	if e.controlFD, err = intVar(get, EnvControlFD, 3, 1<<20); err != nil {
		return e, err
	}
	return e, nil
}

func intVar(get func(string) string, name string, lo, hi int) (int, error) {
	s := get(name)
	if s == "" {
		return 0, fmt.Errorf("comm: %s is not set (start the program with shmrun, or unset %s): %w", name, EnvJob, ErrInit)
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < lo || v > hi {
		return 0, fmt.Errorf("comm: %s=%q: want an integer in [%d, %d]: %w", name, s, lo, hi, ErrInit)
	}
	return v, nil
}
