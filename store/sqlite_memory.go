package store

import (
	"sync"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// The pure-Go SQLite allocates through modernc.org/libc, whose allocator maps 64 KiB pages from the
// OS and unmaps a page as soon as its last allocation is freed. SQLite's pattern on a quiet
// connection (allocate a page-sized buffer for a statement's write cursor, a handful of small
// objects, free them all when the statement ends) therefore costs an mmap and two munmaps per
// statement. In profiles of the server under load that was a third of all CPU time: the queue's
// fetch poll, the rate-limit upsert, every write. Two process-wide settings stop the churn:
//
//   - SQLite's page-sized buffers (page cache pages and write cursors' scratch pages) come from one
//     buffer allocated once (SQLITE_CONFIG_PAGECACHE); past its slots SQLite falls back to malloc.
//   - Statement journals (the undo log of one statement inside a transaction, and of savepoints)
//     stay in memory in small chunks (SQLITE_CONFIG_STMTJRNL_SPILL -1) instead of 64 KiB chunks,
//     each one mapped and unmapped. They hold one statement's changes: small here.
//   - One allocation is kept in each small size class, so its page is never unmapped and the next
//     statement's objects land there.
//
// Both must happen before SQLite initialises (the first connection opens), and SQLite's
// configuration is global to the process, so this runs once, from Open, for every SQLite store.

// pageCacheSlots is how many page-sized slots the shared buffer holds (about 4.4 MiB with 4 KiB
// pages): the default cache of one connection (2,000 KiB) plus scratch pages.
const pageCacheSlots = 1024

// sqlitePageSize is SQLite's default page size, the size the buffer's slots are made for.
const sqlitePageSize = 4096

var tuneSQLiteOnce sync.Once

// tuneSQLiteMemory applies the settings above once per process. A SQLite already initialised (by
// a connection opened elsewhere first) refuses the page cache setting; that only costs speed.
func tuneSQLiteMemory() {
	tuneSQLiteOnce.Do(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		// SQLite writes the header size through the pointer it is given: C memory, since a Go
		// variable's address held as a uintptr may move with its stack.
		hp := libc.Xmalloc(tls, 4)
		if hp == 0 {
			return
		}
		hv := libc.NewVaList(hp)
		rc := sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_PCACHE_HDRSZ, hv)
		libc.Xfree(tls, hv)
		hdr := *(*int32)(unsafe.Pointer(&libc.GoBytes(hp, 4)[0])) // a copy, in native byte order
		libc.Xfree(tls, hp)
		if rc == sqlite3.SQLITE_OK {
			slot := int32(sqlitePageSize) + hdr
			buf := libc.Xmalloc(tls, libc.Tsize_t(slot)*pageCacheSlots) // kept for the process's life
			if buf != 0 {
				va := libc.NewVaList(buf, slot, int32(pageCacheSlots))
				if sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_PAGECACHE, va) != sqlite3.SQLITE_OK {
					libc.Xfree(tls, buf)
				}
				libc.Xfree(tls, va)
			}
		}
		va := libc.NewVaList(int32(-1))
		sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_STMTJRNL_SPILL, va)
		libc.Xfree(tls, va)
		// One allocation per size class of the allocator (16 B to 16 KiB), never freed.
		for size := 16; size <= 16<<10; size *= 2 {
			libc.Xmalloc(tls, libc.Tsize_t(size))
		}
	})
}
