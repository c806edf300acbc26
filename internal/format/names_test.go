package format_test

import (
	"strings"
	"testing"

	"github.com/shmrun/shmrun/internal/format"
)

func TestNames(t *testing.T) {
	job, id := format.NewJobID(), format.NewObjectID()
	if len(job) != 32 || !format.ValidJobID(job) || len(id) != 16 {
		t.Fatalf("job %q, object %q", job, id)
	}
	if job == format.NewJobID() || id == format.NewObjectID() {
		t.Fatal("ids repeat")
	}
	name := format.ObjectName(job, id)
	if name != "shmrun."+job+"."+id {
		t.Errorf("ObjectName = %q", name)
	}
	if j, i, ok := format.SplitName(name); !ok || j != job || i != id {
		t.Errorf("SplitName(%q) = %q, %q, %v", name, j, i, ok)
	}
	for _, bad := range []string{"", "shmrun.", "shmrun.abc", "shmrun.abc.", "shmrun..x", "shmrun.ABC.x", "shmrun.xyz.x",
		"shmrun.abc.x.y", "shmrun.abc.x/y", "other.abc.x", "shmrun." + strings.Repeat("a", 65) + ".x"} {
		if _, _, ok := format.SplitName(bad); ok {
			t.Errorf("SplitName(%q) accepted it", bad)
		}
	}
	for s, want := range map[string]bool{"0": true, "0123456789abcdef": true, strings.Repeat("f", 64): true,
		"": false, strings.Repeat("f", 65): false, "A": false, "g": false, "a.b": false, "a/b": false, "-1": false} {
		if format.ValidJobID(s) != want {
			t.Errorf("ValidJobID(%q) = %v", s, !want)
		}
	}
}

// FuzzSplitName: SplitName parses names found in a directory anyone may
// write to; whatever it accepts must round-trip through ObjectName, and be
// a valid job id and a slash- and dot-free object id.
func FuzzSplitName(f *testing.F) {
	for _, s := range []string{"shmrun.0123abcd.lock", "shmrun.abc.x", "shmrun..x", "other.abc.x", "shmrun.abc.x/y", "shmrun.abc.x.y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		job, id, ok := format.SplitName(name)
		if !ok {
			return
		}
		if !format.ValidJobID(job) || id == "" || strings.ContainsAny(id, "/.") {
			t.Fatalf("SplitName(%q) accepted job %q, id %q", name, job, id)
		}
		if format.ObjectName(job, id) != name {
			t.Fatalf("SplitName(%q) = %q, %q, which name %q", name, job, id, format.ObjectName(job, id))
		}
	})
}
