package cairn

import (
	"context"
	"time"
)

// File entry types.
const (
	FileTypeFile    = "file"
	FileTypeDir     = "dir"
	FileTypeSymlink = "symlink"
	FileTypeOther   = "other"
)

// Bounds of the files routes.
const (
	DefaultFileListLimit = 200
	MaxFileListLimit     = 1000
	// MaxFileReadBytes is the most one read returns: whole files leave
	// through an artifact, never through the API server.
	MaxFileReadBytes = 1 << 20
)

// Headers of a file content answer: the file's size and modification time
// when it was read, and the offset the bytes start at.
const (
	HeaderFileSize   = "X-Cairn-File-Size"
	HeaderFileMTime  = "X-Cairn-File-Mtime"
	HeaderFileOffset = "X-Cairn-File-Offset"
)

// Archive formats of pack and unpack.
const (
	ArchiveTarGz = "tar.gz"
	ArchiveZip   = "zip"
)

// Archive MIME types: what a packed artifact records, and what an unpack
// recognises.
const (
	MIMEGzip = "application/gzip"
	MIMEZip  = "application/zip"
)

// FileEntry is one file of a workspace volume. Mode is the permission and
// special bits in four octal digits ("0644"); LinkTarget is set for a
// symlink, which is reported and never followed.
type FileEntry struct {
	Name       string    `json:"name"`
	Type       string    `json:"type"`
	Size       int64     `json:"size"`
	Mode       string    `json:"mode"`
	MTime      time.Time `json:"mtime"`
	LinkTarget *string   `json:"link_target,omitempty"`
	// ETag changes whenever the file is replaced, written, resized or
	// has its mode or owner changed; a write's If-Match takes it.
	ETag string `json:"etag,omitempty"`
}

// FileListing is one page of a directory, in byte order of names; a path
// that is not a directory lists as its one entry. NextAfter, when set, is
// the After of the next page.
type FileListing struct {
	Path      string      `json:"path"`
	Entries   []FileEntry `json:"entries"`
	NextAfter string      `json:"next_after,omitempty"`
}

// FileListParams selects a page of a directory. Limit 0 is the default.
type FileListParams struct {
	Path  string
	Limit int
	After string
}

// FileReadParams selects a byte range of a regular file. Length 0 reads as
// much as one read may.
type FileReadParams struct {
	Path   string
	Offset int64
	Length int64
}

// FileContent is a byte range of a file: Data from Offset, and the file's
// size and modification time when it was read.
type FileContent struct {
	Path        string
	Offset      int64
	Data        []byte
	Size        int64
	MTime       time.Time
	ContentType string
	ETag        string
}

// UnpackResult is what an unpack wrote.
type UnpackResult struct {
	TargetDir string `json:"target_dir"`
	Entries   int    `json:"entries"`
	Bytes     int64  `json:"bytes"`
}

// FileService reads a workspace volume's files and unpacks archives into it.
// Paths are volume paths (ValidateVolumePath, the mount root allowed for a
// listing).
type FileService interface {
	// ListFiles lists one directory page. Reasons: invalid_path,
	// invalid_parameters, path_outside_mount, workspace_not_found,
	// volume_not_ready, path_not_found, path_is_symlink, path_unreadable,
	// docker_unavailable, sidecar_busy, sidecar_timeout.
	ListFiles(ctx context.Context, workspaceID string, p FileListParams) (*FileListing, error)
	// ReadFile reads at most MaxFileReadBytes of a regular file. Reasons:
	// as ListFiles, plus range_too_large, path_is_directory,
	// path_not_regular.
	ReadFile(ctx context.Context, workspaceID string, p FileReadParams) (*FileContent, error)
	// UnpackArtifact unpacks an archive artifact into the new directory
	// targetDir. Reasons: artifact_not_found, object_missing,
	// archive_invalid, archive_unsafe_path, archive_too_large,
	// archive_ratio, target_exists, target_dir_missing, volume_not_ready,
	// and the transfer reasons.
	UnpackArtifact(ctx context.Context, artifactID, targetDir string) (*UnpackResult, error)
}

// ValidateListPath checks a path to list: a volume path, or the mount root
// itself.
func ValidateListPath(p string) error {
	if p == MountPath || p == MountPath+"/" {
		return checkPathBytes(p)
	}
	return ValidateVolumePath(p)
}

// ArchiveMIME is the MIME type a packed artifact of format records.
func ArchiveMIME(format string) string {
	if format == ArchiveZip {
		return MIMEZip
	}
	return MIMEGzip
}

// ArchiveFormatOf names the archive format of a MIME type, or "" for one
// that is no archive cairn unpacks.
func ArchiveFormatOf(mime string) string {
	switch mime {
	case MIMEGzip, "application/x-gzip":
		return ArchiveTarGz
	case MIMEZip:
		return ArchiveZip
	}
	return ""
}
