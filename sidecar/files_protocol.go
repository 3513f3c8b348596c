package sidecar

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

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
	// CommandWrite names a writer's posture, not a command: it runs serve
	// with CAIRN_WRITABLE=1.
	CommandWrite = "serve-writable"
	// CommandWatch writes a WatchLine on stdout for each batch of changes
	// under CAIRN_MOUNT_ROOT, until stdin ends.
	CommandWatch = "watch"
)

// Environment variables of the files commands.
const (
	EnvFormat        = "CAIRN_FORMAT"          // pack, unpack: tar.gz or zip
	EnvPartSize      = "CAIRN_PART_SIZE"       // pack: bytes per multipart part
	EnvIdleSecs      = "CAIRN_IDLE_SECS"       // serve: exit after this long without a request
	EnvLifetimeSecs  = "CAIRN_LIFETIME_SECS"   // serve: exit this long after start, whatever comes
	EnvMaxEntries    = "CAIRN_MAX_ENTRIES"     // unpack: entries in the archive
	EnvMaxBytes      = "CAIRN_MAX_BYTES"       // unpack: bytes once unpacked
	EnvMaxRatio      = "CAIRN_MAX_RATIO"       // unpack: unpacked bytes per archive byte
	EnvArchiveSHA256 = "CAIRN_ARCHIVE_SHA256"  // unpack: the recorded digest of the archive (base64)
	EnvWritable      = "CAIRN_WRITABLE"        // serve: "1" answers the write operations too
	EnvMaxWriteBytes = "CAIRN_MAX_WRITE_BYTES" // serve, writable: the most one put carries
	EnvWatchPollMS   = "CAIRN_WATCH_POLL_MS"   // watch: poll this often instead of using inotify
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
	ReasonFileChanged       = "file_changed"
	ReasonDirNotEmpty       = "directory_not_empty"
	ReasonWriteTooLarge     = "body_too_large"
	ReasonReadOnly          = "read_only"
)

// Browse operations. ls, read, search and tree only read. put, rm, mkdir
// and mv change the volume and are answered only by a writable serve
// (CAIRN_WRITABLE=1), whose container mounts the volume read-write; a
// reader refuses them (read_only).
const (
	OpList   = "ls"
	OpRead   = "read"
	OpSearch = "search"
	OpTree   = "tree"
	OpPut    = "put"
	OpRemove = "rm"
	OpMkdir  = "mkdir"
	OpMove   = "mv"
	// OpStat describes the path itself, never following it.
	OpStat = "stat"
)

// Bounds of one browse request. MaxReplyLine bounds the reply line a
// runtime reads: a full listing of MaxListLimit entries with 255-byte names
// and 4096-byte link targets, escaped, fits with room to spare.
const (
	MaxListLimit = 1000
	MaxReadBytes = 1 << 20
	MaxReplyLine = 8 << 20
	// MaxWriteBytes is the most a put may carry, whatever a deployment
	// configures: the body is held in the sidecar's memory until written.
	MaxWriteBytes = 64 << 20
)

// Bounds of search and tree. A search stops at the first bound it meets
// and says which (BrowseReply.Stopped); so does a tree, whose reply is also
// held under MaxTreeReplyBytes of paths.
const (
	MaxSearchResults  = 1000
	MaxSearchEntries  = 100_000   // directory entries looked at
	MaxSearchBytes    = 256 << 20 // file bytes read for content
	MaxSearchTime     = 10 * time.Second
	MaxPatternBytes   = 1024 // a glob or an expression
	MaxMatchText      = 512  // bytes of a matching line kept
	MaxTreeDepth      = 32
	MaxTreeEntries    = 10_000
	MaxTreeReplyBytes = 4 << 20
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

	// put: exactly Size raw bytes follow the line. IfMatch is the ETag
	// the file must have now; CreateOnly refuses a file that exists.
	Size       int64  `json:"size,omitempty"`
	Mode       string `json:"mode,omitempty"` // put, mkdir: "0644"; else the rule for new files
	IfMatch    string `json:"if_match,omitempty"`
	CreateOnly bool   `json:"create_only,omitempty"`
	Recursive  bool   `json:"recursive,omitempty"` // rm: a directory with what it holds
	Parents    bool   `json:"parents,omitempty"`   // mkdir: make missing parents; an existing directory is no error
	To         string `json:"to,omitempty"`        // mv: the new path
	Overwrite  bool   `json:"overwrite,omitempty"` // mv: replace what To names

	Glob    string `json:"glob,omitempty"`    // search: names matching this pattern
	Content string `json:"content,omitempty"` // search: lines matching this RE2 expression
	Depth   int    `json:"depth,omitempty"`   // tree: levels below Path, 1 … MaxTreeDepth

	// Body is a put's bytes, sent raw after the line; Size is its length.
	Body []byte `json:"-"`
}

// Writes reports whether op changes the volume: a writer's, and never sent
// twice.
func Writes(op string) bool {
	switch op {
	case OpPut, OpRemove, OpMkdir, OpMove:
		return true
	}
	return false
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
	// ETag changes whenever the file is replaced, written, resized or
	// has its mode or owner changed: a digest of its inode number, size,
	// modification and change times.
	ETag string `json:"etag,omitempty"`
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
	File      *Entry  `json:"file,omitempty"`   // read: the file the bytes come from; put, mkdir, mv: what is there now
	Length    int64   `json:"length,omitempty"` // read: raw bytes following this line
	Data      []byte  `json:"-"`

	Matches []Match     `json:"matches,omitempty"` // search
	Tree    []TreeEntry `json:"tree,omitempty"`    // tree
	// Stopped names the bound that ended a search or tree before it saw
	// everything: "results", "entries", "bytes" or "time"; empty when
	// it saw all.
	Stopped string `json:"stopped,omitempty"`
	Scanned int64  `json:"scanned,omitempty"` // search, tree: entries looked at
}

// Match is one search result: a file whose name matched (Line 0), or one
// line of a file that matched the content expression.
type Match struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
	Text string `json:"text,omitempty"` // the line, cut at MaxMatchText bytes
}

// TreeEntry is one entry of a tree: its path and what a listing says of it.
type TreeEntry struct {
	Path string `json:"path"`
	Entry
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
	Total     int64  `json:"total,omitempty"` // progress: Size bytes of Total moved
	SHA256B64 string `json:"sha256_b64"`
	// Snapshot and restore (snapshot_protocol.go): the digests a have or
	// locate asks about, and a bundle's members.
	Digests []string       `json:"digests,omitempty"`
	Members []BundleMember `json:"members,omitempty"`
}

// Grant answers a Need: the URL, or why there is none (the sidecar then
// fails with ReasonSidecarRejected-like words of the server).
type Grant struct {
	URL   string `json:"url,omitempty"`
	Error string `json:"error,omitempty"`
	// Missing answers a have: the indexes of the digests the store lacks.
	Missing []int `json:"missing,omitempty"`
	// URLs and Locations answer a locate: one Location per digest asked,
	// in order, each naming one of URLs.
	URLs      []string   `json:"urls,omitempty"`
	Locations []Location `json:"locations,omitempty"`
}

// ReasonSidecarRejected is a pack refused by the server: a Grant carried an
// error instead of a URL. It is the API reason of the same name.
const ReasonSidecarRejected = "sidecar_rejected"

// Watch modes: inotify where the filesystem has it, else polling.
const (
	WatchInotify = "inotify"
	WatchPoll    = "poll"
)

// Ops of a Change.
const (
	ChangeCreated   = "created"
	ChangeWritten   = "written"
	ChangeRemoved   = "removed"
	ChangeMovedFrom = "moved_from"
	ChangeMovedTo   = "moved_to"
)

// Why a watch asks for a resync: changes were lost.
const (
	ResyncOverflow = "overflow"  // the kernel's queue, or a batch, ran over
	ResyncTooLarge = "too_large" // more directories or entries than a watch follows
)

// Bounds of a watch.
const (
	WatchWindow      = 50 * time.Millisecond // a batch is sent this long after its first change
	MaxWatchBatch    = 1024                  // distinct paths in one batch
	MaxWatchDirs     = 65536                 // directories inotify follows
	MaxPollEntries   = 100_000               // entries one poll looks at
	DefaultPollEvery = 2 * time.Second
	MaxWatchLine     = 8 << 20 // a line: MaxWatchBatch paths of PATH_MAX, escaped
)

// Change is one path that changed: its op, and whether it is a directory.
type Change struct {
	Path string `json:"path"`
	Op   string `json:"op"`
	Dir  bool   `json:"dir,omitempty"`
}

// WatchLine is one line a watch writes: Ready once its watches are set
// (Mode says how it watches), then batches of Changes, each path once
// with its last op, or Resync when changes were lost.
type WatchLine struct {
	Ready   bool     `json:"ready,omitempty"`
	Mode    string   `json:"mode,omitempty"`
	Changes []Change `json:"changes,omitempty"`
	Resync  string   `json:"resync,omitempty"`
}

// ReadWatchLines decodes a watch's output into lines until the output
// ends or stop closes (nil). A watch's output never ends well: an end is
// io.ErrUnexpectedEOF, or the reader's error.
func ReadWatchLines(out io.Reader, lines chan<- WatchLine, stop <-chan struct{}) error {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), MaxWatchLine)
	for sc.Scan() {
		var l WatchLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return fmt.Errorf("the watch sidecar answered out of protocol: %w", err)
		}
		select {
		case lines <- l:
		case <-stop:
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.ErrUnexpectedEOF
}
