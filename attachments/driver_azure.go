//go:build !nocloud && !noazure

package attachments

// The azblob:// blob storage driver. Build with -tags noazure (or nocloud, for every cloud driver) to leave
// it and its SDK out of the binary (README: Binary size).
import _ "gocloud.dev/blob/azureblob"
