package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestModuleRootInWorkspace: in a workspace (go.work) of this module and
// another, go list -m lists both; the installer must still find this
// module's directory.
func TestModuleRootInWorkspace(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	other := filepath.Join(ws, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		filepath.Join(other, "go.mod"): "module example.com/other\n\ngo 1.26.0\n",
		filepath.Join(ws, "go.work"):   "go 1.26.0\n\nuse (\n\t./other\n\t" + root + "\n)\n",
	}
	for name, text := range files {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(other)
	t.Setenv("GOWORK", filepath.Join(ws, "go.work"))
	got, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if got != root {
		t.Errorf("moduleRoot() = %q, want %q", got, root)
	}
}
