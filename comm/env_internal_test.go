//go:build !mpi

package comm

import (
	"errors"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/shm"
)

// envOf returns a getenv over m.
func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// rankVars is a well-formed environment of rank 1 of 4, with changes.
func rankVars(changes ...string) map[string]string {
	m := map[string]string{
		EnvJob: "0123456789abcdef", EnvRank: "1", EnvSize: "4", EnvControlFD: "3", EnvShmDir: "/dev/shm",
	}
	for i := 0; i+1 < len(changes); i += 2 {
		if changes[i+1] == "<unset>" {
			delete(m, changes[i])
		} else {
			m[changes[i]] = changes[i+1]
		}
	}
	return m
}

func TestParseEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want rankEnv // compared when ok
		ok   bool
	}{
		{"singleton", map[string]string{}, rankEnv{singleton: true, size: 1, controlFD: -1, dir: shm.DefaultDir}, true},
		{"singleton with shm dir", map[string]string{EnvShmDir: "/tmp/x"}, rankEnv{singleton: true, size: 1, controlFD: -1, dir: "/tmp/x"}, true},
		{"singleton with local rank", map[string]string{EnvLocalRank: "0"}, rankEnv{singleton: true, size: 1, controlFD: -1, dir: shm.DefaultDir}, true},
		{"rank", rankVars(), rankEnv{job: "0123456789abcdef", rank: 1, size: 4, localRank: 1, controlFD: 3, dir: "/dev/shm"}, true},
		{"local rank", rankVars(EnvLocalRank, "3"), rankEnv{job: "0123456789abcdef", rank: 1, size: 4, localRank: 3, controlFD: 3, dir: "/dev/shm"}, true},
		{"app number", rankVars(EnvAppNum, "3"), rankEnv{job: "0123456789abcdef", rank: 1, size: 4, localRank: 1, appNum: 3, appSet: true, controlFD: 3, dir: "/dev/shm"}, true},
		{"app number 0", rankVars(EnvAppNum, "0"), rankEnv{job: "0123456789abcdef", rank: 1, size: 4, localRank: 1, appSet: true, controlFD: 3, dir: "/dev/shm"}, true},
		{"default dir", rankVars(EnvShmDir, "<unset>"), rankEnv{job: "0123456789abcdef", rank: 1, size: 4, localRank: 1, controlFD: 3, dir: shm.DefaultDir}, true},
		{"size 1", rankVars(EnvSize, "1", EnvRank, "0"), rankEnv{job: "0123456789abcdef", size: 1, controlFD: 3, dir: "/dev/shm"}, true},
		{"max size", rankVars(EnvSize, strconv.Itoa(format.MaxRanks), EnvRank, strconv.Itoa(format.MaxRanks-1)),
			rankEnv{job: "0123456789abcdef", rank: format.MaxRanks - 1, size: format.MaxRanks, localRank: format.MaxRanks - 1, controlFD: 3, dir: "/dev/shm"}, true},

		{"wait policy", rankVars(EnvWait, "spin=7,yield=0s,sleep=2ms"), rankEnv{job: "0123456789abcdef", rank: 1, size: 4, localRank: 1, controlFD: 3, dir: "/dev/shm",
			policy: barrier.Policy{Spin: 7, Sleep: 2 * time.Millisecond}}, true},
		{"singleton wait policy", map[string]string{EnvWait: "sleep=3ms"}, rankEnv{singleton: true, size: 1, controlFD: -1, dir: shm.DefaultDir,
			policy: barrier.Policy{Spin: barrier.DefaultPolicy.Spin, Yield: barrier.DefaultPolicy.Yield, Sleep: 3 * time.Millisecond}}, true},

		{"bad wait policy", rankVars(EnvWait, "sleep=0s"), rankEnv{}, false},
		{"singleton bad wait policy", map[string]string{EnvWait: "nap=1s"}, rankEnv{}, false},
		{"rank without job", map[string]string{EnvRank: "0"}, rankEnv{}, false},
		{"size without job", map[string]string{EnvSize: "1"}, rankEnv{}, false},
		{"fd without job", map[string]string{EnvControlFD: "3"}, rankEnv{}, false},
		{"relative dir", rankVars(EnvShmDir, "shm"), rankEnv{}, false},
		{"memfd backing", rankVars(EnvShm, "memfd"), rankEnv{job: "0123456789abcdef", rank: 1, size: 4, localRank: 1, controlFD: 3, dir: "/dev/shm", backing: format.BackingMemfd}, true},
		{"bad backing", rankVars(EnvShm, "ram"), rankEnv{}, false},
		{"single copy off", rankVars(format.EnvSingleCopy, "off"), rankEnv{job: "0123456789abcdef", rank: 1, size: 4, localRank: 1, controlFD: 3, dir: "/dev/shm", noSingleCopy: true}, true},
		{"single copy on", rankVars(format.EnvSingleCopy, "on"), rankEnv{job: "0123456789abcdef", rank: 1, size: 4, localRank: 1, controlFD: 3, dir: "/dev/shm"}, true},
		{"bad single copy", rankVars(format.EnvSingleCopy, "maybe"), rankEnv{}, false},
		{"singleton relative dir", map[string]string{EnvShmDir: "./x"}, rankEnv{}, false},
		{"relative stats dir", map[string]string{format.EnvStats: "1"}, rankEnv{}, false},
		{"relative trace dir", rankVars(format.EnvTrace, "trace"), rankEnv{}, false},
		{"job upper case", rankVars(EnvJob, "ABC"), rankEnv{}, false},
		{"job with slash", rankVars(EnvJob, "ab/cd"), rankEnv{}, false},
		{"job with dot", rankVars(EnvJob, "ab.cd"), rankEnv{}, false},
		{"job too long", rankVars(EnvJob, "a123456789012345678901234567890123456789012345678901234567890123456789"), rankEnv{}, false},
		{"no size", rankVars(EnvSize, "<unset>"), rankEnv{}, false},
		{"size 0", rankVars(EnvSize, "0"), rankEnv{}, false},
		{"size -1", rankVars(EnvSize, "-1"), rankEnv{}, false},
		{"size abc", rankVars(EnvSize, "abc"), rankEnv{}, false},
		{"size with space", rankVars(EnvSize, " 4"), rankEnv{}, false},
		{"size too big", rankVars(EnvSize, strconv.Itoa(format.MaxRanks+1)), rankEnv{}, false},
		{"size overflows", rankVars(EnvSize, "99999999999999999999999"), rankEnv{}, false},
		{"no rank", rankVars(EnvRank, "<unset>"), rankEnv{}, false},
		{"rank = size", rankVars(EnvRank, "4"), rankEnv{}, false},
		{"rank -1", rankVars(EnvRank, "-1"), rankEnv{}, false},
		{"rank 1.0", rankVars(EnvRank, "1.0"), rankEnv{}, false},
		{"local rank = size", rankVars(EnvLocalRank, "4"), rankEnv{}, false},
		{"app number = size", rankVars(EnvAppNum, "4"), rankEnv{}, false},
		{"app number -1", rankVars(EnvAppNum, "-1"), rankEnv{}, false},
		{"app number x", rankVars(EnvAppNum, "x"), rankEnv{}, false},
		{"app number without job", map[string]string{EnvAppNum: "0"}, rankEnv{}, false},
		{"local rank x", rankVars(EnvLocalRank, "x"), rankEnv{}, false},
		{"no fd", rankVars(EnvControlFD, "<unset>"), rankEnv{}, false},
		{"fd 2", rankVars(EnvControlFD, "2"), rankEnv{}, false},
		{"fd -1", rankVars(EnvControlFD, "-1"), rankEnv{}, false},
		{"fd huge", rankVars(EnvControlFD, "1048577"), rankEnv{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.ok && tt.want.policy == (barrier.Policy{}) {
				tt.want.policy = barrier.DefaultPolicy
			}
			got, err := parseEnv(envOf(tt.env))
			switch {
			case tt.ok && err != nil:
				t.Fatalf("parseEnv: %v", err)
			case tt.ok && got != tt.want:
				t.Errorf("parseEnv = %+v, want %+v", got, tt.want)
			case !tt.ok && !errors.Is(err, ErrInit):
				t.Errorf("parseEnv = %+v, %v; want an ErrInit error", got, err)
			}
		})
	}
}

// FuzzParseEnv: parseEnv never panics, and what it accepts is in range.
func FuzzParseEnv(f *testing.F) {
	f.Add("0123456789abcdef", "1", "4", "", "3", "/dev/shm", "")
	f.Add("", "", "", "", "", "", "")
	f.Add("", "0", "", "", "", "rel", "spin=1")
	f.Add("ab", "0", "1", "0", "1048576", "/", "spin=0,yield=1s,sleep=1ms")
	f.Add("ab", "65535", "65536", "-0", "+3", "/x", " sleep=1s , spin=10000000")
	f.Fuzz(func(t *testing.T, job, rank, size, local, fd, dir, wait string) {
		m := map[string]string{EnvJob: job, EnvRank: rank, EnvSize: size, EnvLocalRank: local, EnvControlFD: fd, EnvShmDir: dir, EnvWait: wait}
		e, err := parseEnv(envOf(m))
		if err != nil {
			if !errors.Is(err, ErrInit) {
				t.Fatalf("error %v is not ErrInit", err)
			}
			return
		}
		if p := e.policy; p.Spin < 0 || p.Spin > 10_000_000 || p.Yield < 0 || p.Yield > time.Second || p.Sleep < time.Millisecond || p.Sleep > time.Second {
			t.Fatalf("accepted wait policy %+v from %q", p, wait)
		}
		if !filepath.IsAbs(e.dir) {
			t.Fatalf("accepted a relative shm dir %q", e.dir)
		}
		if e.singleton {
			if job != "" || e.size != 1 || e.rank != 0 || e.controlFD != -1 {
				t.Fatalf("singleton %+v from %q", e, m)
			}
			return
		}
		if !format.ValidJobID(e.job) || e.size < 1 || e.size > format.MaxRanks || e.rank < 0 || e.rank >= e.size ||
			e.localRank < 0 || e.localRank >= e.size || e.controlFD < 3 || e.controlFD > 1<<20 {
			t.Fatalf("accepted %+v from %q", e, m)
		}
	})
}
