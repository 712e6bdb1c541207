package attachments

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
)

// TestCloudDrivers: a cloud scheme is either in the binary (built with its tag, or -tags cloud) or
// refused with a message that names the tag (CI runs this in the default build and with -tags cloud).
// Registered drivers are not opened here: opening one looks for cloud credentials.
func TestCloudDrivers(t *testing.T) {
	t.Parallel()
	for scheme, tag := range cloudTags {
		if blob.DefaultURLMux().ValidBucketScheme(scheme) {
			continue
		}
		_, err := OpenBucket(context.Background(), scheme+"://bucket")
		require.ErrorContains(t, err, "built without the "+scheme+":// driver", scheme)
		require.ErrorContains(t, err, "-tags "+tag, scheme)
	}
	require.True(t, blob.DefaultURLMux().ValidBucketScheme("file"), "file:// is always in")
}
