//go:build azure || cloud

package attachments

// The azblob:// blob storage driver, left out of the default build for its size and compile time.
// Build with -tags azure (or cloud, for every cloud driver) to put it and its SDK in
// (docs/operations.md: Cloud blob drivers).
import _ "gocloud.dev/blob/azureblob"
