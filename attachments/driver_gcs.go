//go:build gcs || cloud

package attachments

// The gs:// blob storage driver, left out of the default build for its size and compile time. Build
// with -tags gcs (or cloud, for every cloud driver) to put it and its SDK in (docs/operations.md:
// Cloud blob drivers).
import _ "gocloud.dev/blob/gcsblob"
