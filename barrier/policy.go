package barrier

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParsePolicy reads a wait policy written as comma-separated settings over
// DefaultPolicy, e.g. "spin=500,yield=2ms,sleep=20ms" (the SHMRUN_WAIT
// environment variable), or the word "oversubscribed" (OversubscribedPolicy)
// followed by settings over it. spin is a count (0 to 10^7); yield a duration from
// 0 to 1 s (0: sleep as soon as spinning ends); sleep a duration from 1 ms to
// 1 s (how late an abort may be noticed). An empty string is DefaultPolicy.
func ParsePolicy(s string) (Policy, error) {
	p := DefaultPolicy
	if strings.TrimSpace(s) == "" {
		return p, nil
	}
	parts := strings.Split(s, ",")
	if strings.TrimSpace(parts[0]) == "oversubscribed" {
		p, parts = OversubscribedPolicy, parts[1:]
	}
	for _, kv := range parts {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return p, fmt.Errorf("wait policy %q: %q is not key=value", s, kv)
		}
		switch k {
		case "spin":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 10_000_000 {
				return p, fmt.Errorf("wait policy %q: spin=%q: want a count from 0 to 10000000", s, v)
			}
			p.Spin = n
		case "yield":
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 || d > time.Second {
				return p, fmt.Errorf("wait policy %q: yield=%q: want a duration from 0 to 1s", s, v)
			}
			p.Yield = d
		case "sleep":
			d, err := time.ParseDuration(v)
			if err != nil || d < time.Millisecond || d > time.Second {
				return p, fmt.Errorf("wait policy %q: sleep=%q: want a duration from 1ms to 1s", s, v)
			}
			p.Sleep = d
		default:
			return p, fmt.Errorf("wait policy %q: unknown setting %q (spin, yield, sleep)", s, k)
		}
	}
	return p, nil
}

// String writes p in the form ParsePolicy reads.
func (p Policy) String() string {
	return fmt.Sprintf("spin=%d,yield=%v,sleep=%v", p.Spin, p.Yield, p.Sleep)
}
