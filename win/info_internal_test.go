//go:build !mpi

package win

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseInfo: parseInfo never panics on any keys and values; a refusal
// is ErrInfo naming a known key and quoting its value; an acceptance
// reports values that parse back to the same configuration, and a key it
// does not know changes nothing.
func FuzzParseInfo(f *testing.F) {
	for _, kv := range [][4]string{
		{"no_locks", "true", "same_size", "FALSE"},
		{"accumulate_ordering", "rar, waw", "accumulate_ops", "same_op"},
		{"accumulate_ordering", "none", "alloc_shared_noncontig", " true "},
		{"accumulate_ordering", "rar,,raw", "x", "y"},
		{"accumulate_ordering", "", "shmrun_huge_pages", "1"},
		{"same_disp_unit", "maybe", "shmrun_no_reserve", "true"},
		{"accumulate_ops", "same_op_no_op\x00", "", ""},
		{"unknown_key", "\xff\xfe", "accumulate_ordering", "war,war,rar"},
	} {
		f.Add(kv[0], kv[1], kv[2], kv[3])
	}
	defaults, err := parseInfo(nil)
	if err != nil {
		f.Fatal(err)
	}
	keys := defaults.info()
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		info := Info{k1: v1, k2: v2}
		c, err := parseInfo(info)
		if err != nil {
			if !errors.Is(err, ErrInfo) {
				t.Fatalf("parseInfo(%q) = %v, want ErrInfo", info, err)
			}
			named := false
			for k := range info {
				_, known := keys[k]
				named = named || known && strings.Contains(err.Error(), k)
			}
			if !named {
				t.Fatalf("parseInfo(%q) = %v: names no known key", info, err)
			}
			return
		}
		back, err := parseInfo(c.info())
		if err != nil || back != c {
			t.Fatalf("parseInfo(%q) = %+v, but its Info %q parses to %+v, %v", info, c, c.info(), back, err)
		}
		for k := range info {
			if _, known := keys[k]; !known {
				delete(info, k)
			}
		}
		if only, err := parseInfo(info); err != nil || only != c {
			t.Fatalf("unknown keys changed the result: %+v without them, %+v with", only, c)
		}
	})
}
