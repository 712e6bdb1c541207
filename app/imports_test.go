package app_test

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

// TestOnlyCommandsImportApp: app sits between the commands and everything it wires, so outside
// tests only cmd/ and the test harness (server/servertest) import it, and it imports neither the
// HTTP layer nor a command. A server that imported it would build its own services again.
func TestOnlyCommandsImportApp(t *testing.T) {
	t.Parallel()
	seen := 0
	err := filepath.WalkDir("..", func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); name == "testdata" || name == "node_modules" || (strings.HasPrefix(name, ".") && name != "..") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(dir, 0)
		if _, ok := err.(*build.NoGoError); ok {
			return nil
		}
		require.NoError(t, err, dir)
		rel, err := filepath.Rel("..", dir)
		require.NoError(t, err)
		name := filepath.ToSlash(rel)
		seen++
		if name == "app" {
			for _, imp := range pkg.Imports {
				dep, _ := strings.CutPrefix(imp, modulePath)
				require.False(t, dep == "server" || strings.HasPrefix(dep, "server/") || strings.HasPrefix(dep, "cmd/"), "app imports %s", imp)
			}
			return nil
		}
		if slices.Contains(pkg.Imports, modulePath+"app") {
			require.True(t, strings.HasPrefix(name, "cmd/") || name == "server/servertest", "%s imports app: only the commands and the test harness build the services", name)
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, seen, 20, "the walk found the module's packages")
}
