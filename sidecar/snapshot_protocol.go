package sidecar

// The snapshot and restore commands: a snapshot records the whole volume
// as a manifest plus content stored by digest, uploading only the content
// the store lacks; a restore rebuilds a volume's contents from one.
//
// A snapshot walks the mount root, hashes every regular file (or takes
// its digest from the workspace's previous manifest, CAIRN_URL and
// CAIRN_ARCHIVE_SHA256 when given, if the file's size, times and inode did
// not change) and asks the
// server, in batches (NeedHave), which digests the store lacks. Each
// missing file larger than the bundle bound goes up as one object
// (NeedBlob); smaller ones are packed back to back into bundles
// (NeedBundle) of at most BundleMaxBytes and BundleMaxMembers. Last comes
// the manifest itself (NeedManifest): gzip-compressed JSON lines, one
// ManifestEntry each, the mount root first as ".". Every upload URL is
// bound to the size and SHA-256 of the bytes it carries, so the store
// refuses anything else.
//
// A restore reads the manifest (CAIRN_URL, its digest in
// CAIRN_ARCHIVE_SHA256), asks where each digest is (NeedLocate), and
// builds the tree in a staging directory at the mount root, checking every
// file's digest as it is written. Only once the whole tree is there does
// it swap: the old entries move aside, the new ones in, and the old ones
// are removed. An interrupted swap is finished by the next restore.

// Commands.
const (
	CommandSnapshot = "snapshot"
	CommandRestore  = "restore"
)

// Needs of a snapshot and a restore.
const (
	NeedHave     = "have"     // Digests: which does the store lack? Grant.Missing
	NeedBlob     = "blob"     // one file's content as one object: Grant.URL
	NeedBundle   = "bundle"   // Members, back to back: Grant.URL
	NeedManifest = "manifest" // the manifest: Grant.URL
	NeedLocate   = "locate"   // Digests: where is each? Grant.URLs and Grant.Locations
)

// Bounds of the snapshot protocol.
const (
	// HaveBatch is the most digests one NeedHave carries.
	HaveBatch = 256
	// LocateBatch is the most digests one NeedLocate carries: its answer
	// may hold one presigned URL per digest, and a grant line has a bound.
	LocateBatch = 32
	// BundleMaxMembers is the most files one bundle holds, which keeps
	// its Need line short.
	BundleMaxMembers = 400
	// BundleMaxBytes is the most bytes one bundle holds; a restore holds
	// one bundle in memory.
	BundleMaxBytes = 8 << 20
	// DefaultBundleFileMax is the largest file a snapshot bundles unless
	// CAIRN_BUNDLE_FILE_MAX says otherwise.
	DefaultBundleFileMax = 256 << 10
)

// EnvBundleFileMax is the largest file a snapshot bundles (bytes).
const EnvBundleFileMax = "CAIRN_BUNDLE_FILE_MAX"

// Entry types of a manifest.
const (
	ManifestDir     = "dir"
	ManifestFile    = "file"
	ManifestSymlink = "symlink"
)

// ManifestEntry is one line of a manifest. Path is relative to the mount
// root, slash-separated, "." for the root itself; a directory comes before
// everything under it. Mode holds the permission bits with set-uid,
// set-gid and sticky (07777). Special files (devices, fifos, sockets) are
// not recorded; hard links are recorded as separate files.
type ManifestEntry struct {
	Path    string `json:"path"`
	Type    string `json:"type"`
	Mode    uint32 `json:"mode"`
	UID     int    `json:"uid"`
	GID     int    `json:"gid"`
	MTimeNS int64  `json:"mtime_ns"`
	Size    int64  `json:"size,omitempty"`   // file
	SHA256  string `json:"sha256,omitempty"` // file: lower-case hex
	Target  string `json:"target,omitempty"` // symlink
	// A file's change time and inode, recorded only when the file had
	// settled (its ctime older than settleTime before the walk began):
	// the next snapshot of the volume takes the digest of a file whose
	// size, mtime, ctime and inode are all still these without reading
	// it. A restore ignores them.
	CTimeNS int64  `json:"ctime_ns,omitempty"`
	Ino     uint64 `json:"ino,omitempty"`
}

// BundleMember is one file's content inside a bundle.
type BundleMember struct {
	SHA256 string `json:"sha256"` // lower-case hex
	Offset int64  `json:"offset"`
	Size   int64  `json:"size"`
}

// Location is where a restore finds one digest's content: bytes
// [Offset, Offset+Size) of the object at URLs[Object] of its grant.
type Location struct {
	Object int   `json:"object"`
	Offset int64 `json:"offset"`
	Size   int64 `json:"size"`
	Bundle bool  `json:"bundle,omitempty"` // the object holds other content too
}

// ReadOnlyMount reports a command whose container mounts the volume
// read-only: a snapshot only reads it.
func ReadOnlyMount(command string) bool { return command == CommandSnapshot }

// Failure reasons of a snapshot or restore.
const (
	// ReasonDigestMismatch: a manifest or content read from the store
	// does not hash to its recorded digest.
	ReasonDigestMismatch = "digest_mismatch"
	// ReasonTooManyEntries: the tree has more entries than the bound.
	ReasonTooManyEntries = "too_many_entries"
)

// More failure reasons of a snapshot or restore. The server maps each to
// the API reason of the same name.
const (
	// ReasonSnapshotTooLarge: the manifest is over MaxManifestBytes
	// compressed (snapshot, restore), or its files add up to more than
	// CAIRN_MAX_BYTES (restore).
	ReasonSnapshotTooLarge = "snapshot_too_large"
	// ReasonManifestInvalid: a restore's manifest, whose digest matched,
	// is not one a snapshot writes: not gzip-compressed JSON lines, or an
	// entry that is not safe or not consistent (a path that is absolute,
	// holds "..", repeats, or comes before its directory; an unknown type;
	// a bad digest, mode, owner or size).
	ReasonManifestInvalid = "manifest_invalid"
)

// MaxManifestBytes bounds a manifest, compressed: a snapshot holds it in
// memory to learn its size and digest before it asks for its URL.
const MaxManifestBytes = 64 << 20

// DefaultMaxSnapshotEntries bounds the entries of a snapshot and of a
// restore unless CAIRN_MAX_ENTRIES says otherwise.
const DefaultMaxSnapshotEntries = 200_000
