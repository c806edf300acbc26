package launcher

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestConflictsUnreadable: a rank's report file that cannot be read is
// named in the error, and the other ranks' pairs still come back, each
// distinct pair once.
func TestConflictsUnreadable(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("rank-0.txt", "k1\tpair one\nk2\tpair two\n")
	if err := os.Mkdir(filepath.Join(dir, "rank-1.txt"), 0o700); err != nil { // reading it fails
		t.Fatal(err)
	}
	write("rank-3.txt", "k2\tpair two\nk3\tpair three\n") // rank 2 wrote none
	o := &observer{checkDir: dir}
	got, err := o.conflicts(4)
	if err == nil || !strings.Contains(err.Error(), "rank 1's reports") {
		t.Errorf("error %v, want one naming rank 1's reports", err)
	}
	if want := []string{"pair one", "pair two", "pair three"}; !slices.Equal(got, want) {
		t.Errorf("pairs %q, want %q", got, want)
	}
}
