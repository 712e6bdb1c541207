//go:build !nocloud && !nogcs

package attachments

// The gs:// blob storage driver. Build with -tags nogcs (or nocloud, for every cloud driver) to leave
// it and its SDK out of the binary (README: Binary size).
import _ "gocloud.dev/blob/gcsblob"
