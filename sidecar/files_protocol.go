package sidecar

import "time"

// Commands of the volume-files capability.
//
//   - serve: the browse container. It reads BrowseRequest lines on stdin
//     and answers each with one BrowseReply line on stdout (a read's bytes
//     follow its line raw, exactly Length of them). It exits on stdin's end,
//     after CAIRN_IDLE_SECS without a request, or at CAIRN_LIFETIME_SECS.
//   - pack: packs the directory CAIRN_SOURCE_PATH as CAIRN_FORMAT. It asks
//     for each upload URL with a Need line on stdout and reads the Grant
//     line on stdin, so every PUT is bound to the size and SHA-256 of the
//     bytes it carries; then it prints its Result line.
//   - unpack: unpacks the archive at CAIRN_URL (CAIRN_FORMAT) into the new
//     directory CAIRN_TARGET_PATH within the bounds of CAIRN_MAX_*, through
//     a fresh directory beside it renamed into place; then its Result line.
const (
	CommandServe  = "serve"
	CommandPack   = "pack"
	CommandUnpack = "unpack"
)

// Environment variables of the files commands.
const (
	EnvFormat        = "CAIRN_FORMAT"         // pack, unpack: tar.gz or zip
	EnvPartSize      = "CAIRN_PART_SIZE"      // pack: bytes per multipart part
	EnvIdleSecs      = "CAIRN_IDLE_SECS"      // serve: exit after this long without a request
	EnvLifetimeSecs  = "CAIRN_LIFETIME_SECS"  // serve: exit this long after start, whatever comes
	EnvMaxEntries    = "CAIRN_MAX_ENTRIES"    // unpack: entries in the archive
	EnvMaxBytes      = "CAIRN_MAX_BYTES"      // unpack: bytes once unpacked
	EnvMaxRatio      = "CAIRN_MAX_RATIO"      // unpack: unpacked bytes per archive byte
	EnvArchiveSHA256 = "CAIRN_ARCHIVE_SHA256" // unpack: the recorded digest of the archive (base64)
)

// Archive formats.
const (
	FormatTarGz = "tar.gz"
	FormatZip   = "zip"
)

// Failure reasons of the files commands. The server maps each to the API
// reason of the same name.
const (
	ReasonPathNotFound      = "path_not_found"
	ReasonPathIsDirectory   = "path_is_directory"
	ReasonPathIsSymlink     = "path_is_symlink"
	ReasonPathNotRegular    = "path_not_regular"
	ReasonPathUnreadable    = "path_unreadable"
	ReasonArchiveInvalid    = "archive_invalid"
	ReasonArchiveUnsafePath = "archive_unsafe_path"
	ReasonArchiveTooLarge   = "archive_too_large"
	ReasonArchiveRatio      = "archive_ratio"
	ReasonTargetExists      = "target_exists"
	ReasonSourceNotDir      = "source_not_directory"
)

// Browse operations.
const (
	OpList = "ls"
	OpRead = "read"
)

// Bounds of one browse request. MaxReplyLine bounds the reply line a
// runtime reads: a full listing of MaxListLimit entries with 255-byte names
// and 4096-byte link targets, escaped, fits with room to spare.
const (
	MaxListLimit = 1000
	MaxReadBytes = 1 << 20
	MaxReplyLine = 8 << 20
)

// Entry types.
const (
	TypeFile    = "file"
	TypeDir     = "dir"
	TypeSymlink = "symlink"
	TypeOther   = "other"
)

// BrowseRequest is one line a serve sidecar reads.
type BrowseRequest struct {
	Op     string `json:"op"`
	Path   string `json:"path"`
	Limit  int    `json:"limit,omitempty"`  // ls: 1 … MaxListLimit
	After  string `json:"after,omitempty"`  // ls: list names byte-greater than this
	Offset int64  `json:"offset,omitempty"` // read
	Length int64  `json:"length,omitempty"` // read: 1 … MaxReadBytes
}

// Entry is one file as a listing reports it. Mode is the permission and
// special bits in four octal digits ("0644", "1777").
type Entry struct {
	Name       string    `json:"name"`
	Type       string    `json:"type"`
	Size       int64     `json:"size"`
	Mode       string    `json:"mode"`
	MTime      time.Time `json:"mtime"`
	LinkTarget *string   `json:"link_target,omitempty"`
}

// BrowseReply answers one BrowseRequest. A read's reply is followed on the
// stream by exactly Length raw bytes; Data holds them once read.
type BrowseReply struct {
	OK        bool    `json:"ok"`
	Error     *string `json:"error,omitempty"`
	Reason    *string `json:"reason,omitempty"`
	Path      string  `json:"path,omitempty"`
	Entries   []Entry `json:"entries,omitempty"`
	NextAfter string  `json:"next_after,omitempty"`
	File      *Entry  `json:"file,omitempty"`   // read: the file the bytes come from
	Length    int64   `json:"length,omitempty"` // read: raw bytes following this line
	Data      []byte  `json:"-"`
}

// Needs a pack sidecar asks for.
const (
	NeedObject = "object" // the whole archive fits one PUT
	NeedPart   = "part"   // one part of a multipart upload
)

// Need is a pack sidecar's request for an upload URL bound to the bytes it
// is about to send. It is told from a Result line by its "need" key.
type Need struct {
	Need      string `json:"need"`
	Number    int    `json:"number,omitempty"` // part: 1 … 10000
	Size      int64  `json:"size"`
	SHA256B64 string `json:"sha256_b64"`
}

// Grant answers a Need: the URL, or why there is none (the sidecar then
// fails with ReasonSidecarRejected-like words of the server).
type Grant struct {
	URL   string `json:"url,omitempty"`
	Error string `json:"error,omitempty"`
}

// ReasonSidecarRejected is a pack refused by the server: a Grant carried an
// error instead of a URL. It is the API reason of the same name.
const ReasonSidecarRejected = "sidecar_rejected"
