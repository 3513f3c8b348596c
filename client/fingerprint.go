package client

import "os"

// fingerprint tells a file apart from what it was when an upload of it
// started: a rewrite changes the modification time, a replacement (a new
// file renamed over it) the inode.
type fingerprint struct {
	Size    int64  `json:"size"`
	MtimeNS int64  `json:"mtime_ns"`
	Inode   uint64 `json:"inode,omitempty"`
	Device  uint64 `json:"dev,omitempty"`
}

func fingerprintOf(fi os.FileInfo) fingerprint {
	fp := fingerprint{Size: fi.Size(), MtimeNS: fi.ModTime().UnixNano()}
	fp.Inode, fp.Device = fileIdentity(fi)
	return fp
}

// statFingerprint is the fingerprint of the file at path now.
func statFingerprint(path string) (fingerprint, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fingerprint{}, err
	}
	return fingerprintOf(fi), nil
}
