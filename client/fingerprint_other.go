//go:build !unix

package client

import "os"

// fileIdentity is unknown here: size and modification time tell files
// apart alone.
func fileIdentity(os.FileInfo) (inode, device uint64) { return 0, 0 }
