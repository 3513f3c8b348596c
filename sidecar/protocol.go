// Package sidecar is cairn-sidecar, the short-lived helper that runs inside a
// hardened container mounting one workspace volume, and the protocol the
// server speaks with it: input only through CAIRN_* environment variables,
// output as exactly one JSON result line. It imports only the standard
// library, so the binary is static and the image is FROM scratch.
package sidecar

// Commands, passed as the container's only argument.
const (
	CommandPrep     = "prep"
	CommandPut      = "put"
	CommandDownload = "download"
)

// Environment variables; the sidecar reads nothing else.
const (
	EnvMountRoot  = "CAIRN_MOUNT_ROOT"
	EnvSourcePath = "CAIRN_SOURCE_PATH"
	EnvTargetPath = "CAIRN_TARGET_PATH"
	EnvURL        = "CAIRN_URL"
	EnvMaxSize    = "CAIRN_MAX_SIZE"
)

// Failure reasons reported in a result line.
const (
	ReasonEnvInvalid       = "env_invalid"
	ReasonPrepFailed       = "prep_failed"
	ReasonPathOutsideMount = "path_outside_mount"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// Result is the line printed by every command. Fields that
// do not apply to a command are omitted.
type Result struct {
	OK             bool    `json:"ok"`
	Error          *string `json:"error,omitempty"`
	Reason         *string `json:"reason,omitempty"`
	HTTPStatus     *int    `json:"http_status,omitempty"`
	PreparedPath   string  `json:"prepared_path,omitempty"`
	UploadedPath   string  `json:"uploaded_path,omitempty"`
	DownloadedPath string  `json:"downloaded_path,omitempty"`
	Size           *int64  `json:"size,omitempty"`
	// SHA256B64 (standard padded base64), MD5 (lower-case hex) and Head (the
	// first HeadBytes bytes, base64 in the line) describe the bytes a put
	// read and sent, all taken in its one pass over the file.
	SHA256B64 string `json:"sha256_b64,omitempty"`
	MD5       string `json:"md5,omitempty"`
	Head      []byte `json:"head,omitempty"`
	// Pack and unpack: the parts a pack sent (0: one PUT), the entries it
	// packed or an unpack wrote, and where an unpack put them.
	Parts        int    `json:"parts,omitempty"`
	Entries      int    `json:"entries,omitempty"`
	UnpackedPath string `json:"unpacked_path,omitempty"`
	// Snapshot: the bytes it uploaded (the rest the store held already)
	// and the special files it left out; Size is then the files' bytes,
	// SHA256B64 the manifest's digest and Entries the manifest's lines.
	UploadedBytes int64 `json:"uploaded_bytes,omitempty"`
	Skipped       int   `json:"skipped,omitempty"`
}

// Failure builds a failed Result.
func Failure(reason, message string) Result {
	return Result{OK: false, Error: &message, Reason: &reason}
}

// ErrorText returns the failure message, or "" when there is none.
func (r Result) ErrorText() string { return deref(r.Error) }

// ReasonText returns the failure reason, or "" when there is none.
func (r Result) ReasonText() string { return deref(r.Reason) }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
