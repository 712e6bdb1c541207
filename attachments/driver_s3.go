//go:build s3 || cloud

package attachments

// The s3:// blob storage driver, left out of the default build for its size and compile time. Build
// with -tags s3 (or cloud, for every cloud driver) to put it and its SDK in (docs/operations.md: Cloud
// blob drivers).
import _ "gocloud.dev/blob/s3blob"
