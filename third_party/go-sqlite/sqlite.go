// Package sqlite is modernc.org/sqlite under the import path the glebarez/sqlite GORM dialector
// expects: it registers the "sqlite" database/sql driver and names the driver's error type.
package sqlite

import "modernc.org/sqlite"

// Error is the driver's error, which the dialector translates by its code.
type Error = sqlite.Error
