package attachments

import (
	"context"
	"fmt"
	"net/url"
	"os"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file:// (the default)
	_ "gocloud.dev/blob/memblob"  // mem:// (tests)
	"gocloud.dev/gcerrors"
)

// The cloud drivers (s3://, gs://, azblob://) are in driver_*.go, each in the binary only when built
// with its tag (or with -tags cloud, for all three).
var cloudTags = map[string]string{"s3": "s3", "gs": "gcs", "azblob": "azure"}

// OpenBucket opens blob storage by URL: file:///dir (created when missing; temporary files are
// written beside the final ones so the rename never crosses file systems; no metadata sidecars), mem://, s3://, gs:// or
// azblob:// (credentials from each cloud's usual environment; the cloud drivers only in a binary built
// with their tags).
func OpenBucket(ctx context.Context, rawURL string) (*blob.Bucket, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("blob URL %q: %w", rawURL, err)
	}
	if u.Scheme == "file" {
		q := u.Query()
		// Metadata lives in the database, so no .attrs sidecar files.
		for k, v := range map[string]string{"create_dir": "1", "no_tmp_dir": "1", "metadata": "skip"} {
			if q.Get(k) == "" {
				q.Set(k, v)
			}
		}
		u.RawQuery = q.Encode()
		if u.Path == "" && u.Host != "." {
			return nil, fmt.Errorf("blob URL %q: want file:///absolute/dir", rawURL)
		}
		if u.Host == "" {
			if err := os.MkdirAll(u.Path, 0o750); err != nil {
				return nil, fmt.Errorf("create blob folder: %w", err)
			}
		}
	}
	if tag, cloud := cloudTags[u.Scheme]; cloud && !blob.DefaultURLMux().ValidBucketScheme(u.Scheme) {
		return nil, fmt.Errorf("blob URL %q: this binary was built without the %s:// driver; build it with -tags %s (or -tags cloud, for every cloud driver)", rawURL, u.Scheme, tag)
	}
	b, err := blob.OpenBucket(ctx, u.String())
	if err != nil {
		return nil, fmt.Errorf("open blob storage %s: %w", u.Scheme, err)
	}
	return b, nil
}

func isNotExist(err error) bool { return gcerrors.Code(err) == gcerrors.NotFound }
