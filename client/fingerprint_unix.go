//go:build unix

package client

import (
	"os"
	"syscall"
)

// fileIdentity is the file's inode and device.
func fileIdentity(fi os.FileInfo) (inode, device uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino), uint64(st.Dev) //nolint:unconvert // the field types differ between platforms
	}
	return 0, 0
}
