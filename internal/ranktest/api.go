package ranktest

import (
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// ExportedAPI lists the exported functions and methods ("Name" or
// "Type.Method", methods of the pointer type included) of the package whose
// source is in dir, from its type-checked non-test files: generic functions
// included. Tests use it to check that a table of calls covers a package's
// whole API, so a new call cannot forget the checks the table drives. The
// files are those of the default build (shmrun's backend).
func ExportedAPI(t testing.TB, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var parsed []*ast.File
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		// The default build's files only: the MPI backend's (-tags mpi)
		// declare the same API again.
		if ok, err := build.Default.MatchFile(dir, filepath.Base(f)); err != nil || !ok {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, af)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	pkg, err := conf.Check(dir, fset, parsed, nil)
	if err != nil {
		t.Fatalf("type-checking %s: %v", dir, err)
	}
	var names []string
	for _, name := range pkg.Scope().Names() {
		switch o := pkg.Scope().Lookup(name).(type) {
		case *types.Func:
			if o.Exported() {
				names = append(names, name)
			}
		case *types.TypeName:
			if !o.Exported() {
				continue
			}
			ms := types.NewMethodSet(types.NewPointer(o.Type()))
			for i := range ms.Len() {
				if m := ms.At(i).Obj(); m.Exported() {
					names = append(names, name+"."+m.Name())
				}
			}
		}
	}
	slices.Sort(names)
	return names
}

// CheckCovers fails t for every exported function or method of the package
// in dir that table lacks, and for every name of table the package does not
// export: a test driven by table then covers the whole API, and a new call
// cannot forget the checks it drives.
func CheckCovers(t testing.TB, dir string, table []string) {
	t.Helper()
	api := ExportedAPI(t, dir)
	for _, name := range api {
		if !slices.Contains(table, name) {
			t.Errorf("exported %s has no entry in the test's table of calls: add how to call it", name)
		}
	}
	for _, name := range table {
		if !slices.Contains(api, name) {
			t.Errorf("the test's table lists %s, which the package does not export", name)
		}
	}
}
