//go:build cloud

package attachments

import (
	"testing"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
)

// TestCloudDriversBuiltIn: -tags cloud puts every cloud driver in the binary (CI builds and runs it).
func TestCloudDriversBuiltIn(t *testing.T) {
	t.Parallel()
	for scheme := range cloudTags {
		require.True(t, blob.DefaultURLMux().ValidBucketScheme(scheme), scheme)
	}
}
