package client

// WithRangeSize returns o with ranges of n bytes, so that a ranged
// download of a few MiB has several.
func WithRangeSize(o DownloadOptions, n int64) DownloadOptions {
	o.rangeSize = n
	return o
}

// PendingRef is the staging key and upload ID behind a pending upload, so
// that a test can act on the upload behind the client's back.
func PendingRef(p PendingUpload) (key, uploadID string) { return p.state.Key, p.state.UploadID }
