package barrier_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shmrun/shmrun/barrier"
)

func TestParsePolicy(t *testing.T) {
	d, o := barrier.DefaultPolicy, barrier.OversubscribedPolicy
	tests := []struct {
		in   string
		want barrier.Policy
		ok   bool
	}{
		{"", d, true},
		{"  ", d, true},
		{"spin=5", barrier.Policy{Spin: 5, Yield: d.Yield, Sleep: d.Sleep}, true},
		{"yield=0", barrier.Policy{Spin: d.Spin, Yield: 0, Sleep: d.Sleep}, true},
		{"spin=0, yield=2ms ,sleep=20ms", barrier.Policy{Spin: 0, Yield: 2 * time.Millisecond, Sleep: 20 * time.Millisecond}, true},
		{"oversubscribed", o, true},
		{"oversubscribed,sleep=1s", barrier.Policy{Spin: o.Spin, Yield: o.Yield, Sleep: time.Second}, true},
		{"spin=x", d, false},
		{"spin=-1", d, false},
		{"spin=10000001", d, false},
		{"yield=2s", d, false},
		{"yield=-1ms", d, false},
		{"sleep=0", d, false},
		{"sleep=500us", d, false},
		{"nap=1", d, false},
		{"spin", d, false},
		{"spin=1,,", d, false},
		{"sleep=20ms,oversubscribed", d, false},
	}
	for _, tt := range tests {
		got, err := barrier.ParsePolicy(tt.in)
		if tt.ok && (err != nil || got != tt.want) {
			t.Errorf("ParsePolicy(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
		if !tt.ok && err == nil {
			t.Errorf("ParsePolicy(%q) = %+v, want an error", tt.in, got)
		}
		if !tt.ok && err != nil && !strings.Contains(err.Error(), "wait policy") {
			t.Errorf("ParsePolicy(%q): error %q does not say what it parsed", tt.in, err)
		}
	}
}

// FuzzParsePolicy: no input panics; an accepted policy is within the
// documented bounds and prints back to the same policy.
func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{"", "spin=5", "oversubscribed,yield=0", "sleep=1s,spin=0", "yield=1ms,nap=2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := barrier.ParsePolicy(s)
		if err != nil {
			return
		}
		if p.Spin < 0 || p.Spin > 10_000_000 || p.Yield < 0 || p.Yield > time.Second ||
			p.Sleep < time.Millisecond || p.Sleep > time.Second {
			t.Fatalf("ParsePolicy(%q) = %+v: out of bounds", s, p)
		}
		again, err := barrier.ParsePolicy(p.String())
		if err != nil || again != p {
			t.Fatalf("ParsePolicy(%q).String() = %q reads back as %+v, %v", s, p.String(), again, err)
		}
	})
}
