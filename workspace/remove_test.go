package workspace

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRemoveFileCommitsTheDeletion(t *testing.T) {
	r, err := Init(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, r.WriteFile("context/a.md", []byte("a")))
	require.NoError(t, r.WriteFile("context/b.md", []byte("b")))
	_, err = r.Commit("add", CheckpointProgress)
	require.NoError(t, err)

	removed, err := r.RemoveFile("context/a.md")
	require.NoError(t, err)
	require.True(t, removed)
	removed, err = r.RemoveFile("context/missing.md")
	require.NoError(t, err)
	require.False(t, removed)
	_, err = r.RemoveFile("../escape")
	require.ErrorIs(t, err, ErrBadPath)
	_, err = r.Commit("remove", CheckpointProgress)
	require.NoError(t, err)

	files, err := r.ListFiles("")
	require.NoError(t, err)
	require.Len(t, files, 1)
	require.Equal(t, "context/b.md", files[0].Path)
}
