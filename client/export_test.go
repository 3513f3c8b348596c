package client

// PartFile is the part file Download writes, for tests outside the package.
type PartFile = partFile

// WithPartFile returns o with its part file opened by create: the seam
// through which a test sees the order of write, fsync and close.
func WithPartFile(o DownloadOptions, create func(path string) (PartFile, error)) DownloadOptions {
	o.createPart = create
	return o
}
