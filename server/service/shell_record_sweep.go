package service

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
)

// recordingPattern matches the files recordings are written to while their
// shells run (newRecording).
const recordingPattern = "cairn-shell-*-*.cast"

// createRecordingFile creates a recording's file (0600) and holds it. A
// sweep that ran between the create and the lock may have removed it; then
// a second file is made, which a sweep can no longer take.
func createRecordingFile(dir, shellID string) (*os.File, error) {
	var err error
	for range 2 {
		var f *os.File
		if f, err = os.CreateTemp(dir, "cairn-shell-"+shellID+"-*.cast"); err != nil {
			return nil, err
		}
		if err = holdRecording(f); err == nil && stillNamed(f) {
			return f, nil
		}
		_ = f.Close() // never written
		_ = os.Remove(f.Name())
	}
	if err == nil {
		err = errors.New("the recording's file was swept as it was made")
	}
	return nil, err
}

// stillNamed reports whether f is still the file at its name.
func stillNamed(f *os.File) bool {
	held, err := f.Stat()
	if err != nil {
		return false
	}
	named, err := os.Stat(f.Name())
	return err == nil && os.SameFile(held, named)
}

// holdRecording takes an exclusive lock on a recording's file for as long
// as this process has it open. The kernel drops the lock when the process
// dies, which is how a sweep tells a crashed server's file from a live one
// — even another server's, sharing the directory.
func holdRecording(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// SweepRecordings removes the recordings in dir (os.TempDir when empty)
// that no process holds: what a server that crashed mid-recording left. It
// returns how many went.
func SweepRecordings(dir string, log *slog.Logger) int {
	if dir == "" {
		dir = os.TempDir()
	}
	names, err := filepath.Glob(filepath.Join(dir, recordingPattern))
	if err != nil {
		return 0 // the pattern is constant and valid
	}
	removed := 0
	for _, name := range names {
		if abandoned(name) && os.Remove(name) == nil {
			removed++
		}
	}
	if removed > 0 {
		log.Info("removed recordings left by a server that ended mid-recording", "dir", dir, "count", removed)
	}
	return removed
}

// abandoned reports whether no process holds the recording at name. Its
// lock is taken, then let go with the file (the caller removes it).
func abandoned(name string) bool {
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	return err == nil || !errors.Is(err, syscall.EWOULDBLOCK)
}
