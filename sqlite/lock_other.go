//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package sqlite

import "errors"

// ErrLocked is returned by Open when another process holds the database's lock file. On this
// system no advisory lock is taken, so it is never returned.
var ErrLocked = errors.New("sqlite: database is in use by another process")

// fileLock is a no-op where flock(2) is unavailable: one process per file is then the
// operator's responsibility.
type fileLock struct{}

func lockFile(string) (*fileLock, error) { return &fileLock{}, nil }

func (*fileLock) release() {}
