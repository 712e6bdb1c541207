//go:build !nocloud && !nos3

package attachments

// The s3:// blob storage driver. Build with -tags nos3 (or nocloud, for every cloud driver) to leave
// it and its SDK out of the binary (README: Binary size).
import _ "gocloud.dev/blob/s3blob"
