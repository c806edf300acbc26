package format_test

import (
	"testing"

	"github.com/shmrun/shmrun/internal/format"
)

func TestParseBacking(t *testing.T) {
	for s, want := range map[string]format.Backing{"": format.BackingAuto, "auto": format.BackingAuto,
		"dir": format.BackingDir, "memfd": format.BackingMemfd} {
		if b, err := format.ParseBacking(s); err != nil || b != want {
			t.Errorf("ParseBacking(%q) = %v, %v; want %v", s, b, err, want)
		}
	}
	for _, s := range []string{"Auto", "mem", "memfd ", "dir,memfd", "0"} {
		if _, err := format.ParseBacking(s); err == nil {
			t.Errorf("ParseBacking(%q) accepted it", s)
		}
	}
}

// FuzzParseBacking: whatever ParseBacking accepts, its String gives back
// (the empty string aside, which means auto).
func FuzzParseBacking(f *testing.F) {
	for _, s := range []string{"", "auto", "dir", "memfd", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := format.ParseBacking(s)
		if err == nil && s != "" && b.String() != s {
			t.Fatalf("ParseBacking(%q) = %v", s, b)
		}
	})
}
