// Stands in for github.com/glebarez/go-sqlite (see the replace in ../../go.mod): the GORM dialector
// github.com/glebarez/sqlite imports that driver, an older fork of modernc.org/sqlite that parses
// every statement again on each execution. This module hands the dialector modernc.org/sqlite
// itself, which keeps prepared statements; both register the database/sql name "sqlite", so only
// one of them may be linked.
module github.com/glebarez/go-sqlite

go 1.26.0

require modernc.org/sqlite v1.62.0

require (
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	golang.org/x/sys v0.49.0 // indirect
	modernc.org/libc v1.80.1 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
)
