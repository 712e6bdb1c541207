package engine_test

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const modulePath = "github.com/researchd/researchd/"

// layers are the engine's packages from the bottom up (docs/architecture.md): a package imports
// engine packages of lower layers only, never one of its own layer or above, so the imports run
// one way. The root (the seam every caller uses) imports none of them; the two engines do not
// import each other; enginetest and wikitest are imported by tests alone.
var layers = [][]string{
	{"engine/nlp", "engine/wikitest"},
	{"engine", "engine/extract"},
	{"engine/sources"},
	{"engine/citations", "engine/output"},
	{"engine/extractive", "engine/llm"},
	{"engine/enginetest"},
}

var testOnly = []string{"engine/enginetest", "engine/wikitest"}

// TestImportsRunOneWay: every engine package is in a layer and imports (outside its tests) only
// engine packages of lower layers; no package imports the test support.
func TestImportsRunOneWay(t *testing.T) {
	t.Parallel()
	layer := map[string]int{}
	for i, pkgs := range layers {
		for _, p := range pkgs {
			layer[p] = i
		}
	}
	seen := 0
	err := filepath.WalkDir(".", func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "testdata" {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(dir, 0)
		if _, ok := err.(*build.NoGoError); ok {
			return nil
		}
		require.NoError(t, err, dir)
		name := filepath.ToSlash(filepath.Join("engine", dir))
		at, ok := layer[name]
		require.True(t, ok, "package %s is in no layer of imports_test.go", name)
		seen++
		for _, imp := range pkg.Imports {
			dep, ok := strings.CutPrefix(imp, modulePath)
			if !ok || (dep != "engine" && !strings.HasPrefix(dep, "engine/")) {
				continue
			}
			require.False(t, slices.Contains(testOnly, dep) && !slices.Contains(testOnly, name), "%s imports %s, which is for tests only", name, dep)
			require.Less(t, layer[dep], at, "%s (layer %d) imports %s (layer %d): imports run one way, up the layers", name, at, dep, layer[dep])
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, len(layer), seen, "a package of imports_test.go's layers is gone")
}
