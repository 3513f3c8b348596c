package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The resume state of multipart uploads: one small JSON file per upload in
// a directory of the user's (DefaultStateDir), written when the upload
// starts and removed once it is registered. It holds what the server
// does not keep for a client: the upload's key, ID and plan, and the
// fingerprint of the file it is cut from.

// stateVersion is the layout of the state files this client writes.
const stateVersion = 1

// DefaultStateDir is where resume state lives unless an option says
// otherwise: $XDG_STATE_HOME/cairn/uploads, else
// ~/.local/state/cairn/uploads.
func DefaultStateDir() (string, error) {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no state directory: %w", err)
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "cairn", "uploads"), nil
}

// uploadState is one unfinished multipart upload.
type uploadState struct {
	Version     int         `json:"version"`
	Server      string      `json:"server"`
	WorkspaceID string      `json:"workspace_id"`
	Source      string      `json:"source"` // absolute path
	Name        string      `json:"name,omitempty"`
	Description *string     `json:"description,omitempty"`
	ArtifactID  string      `json:"artifact_id,omitempty"` // a replace's target
	Key         string      `json:"staging_object_key"`
	UploadID    string      `json:"upload_id"`
	PartSize    int64       `json:"part_size"`
	PartCount   int         `json:"part_count"`
	Fingerprint fingerprint `json:"fingerprint"`
	StartedAt   time.Time   `json:"started_at"`

	file string // where it is kept
}

// part is the offset and size of part n (1-based) of a file of size
// bytes cut by the state's plan.
func (s *uploadState) part(n int, size int64) (off, length int64) {
	off = int64(n-1) * s.PartSize
	return off, min(s.PartSize, size-off)
}

// fits reports whether the plan cuts a file of size bytes: PartCount parts
// of PartSize, the last one holding the rest.
func (s *uploadState) fits(size int64) bool {
	if s.PartSize <= 0 || s.PartCount < 1 {
		return false
	}
	last := size - int64(s.PartCount-1)*s.PartSize
	return last > 0 && last <= s.PartSize
}

// stateFile is where the state of an upload of source (an absolute path)
// to target (a new name or a replaced artifact) is kept: a file named
// after a hash of all that identifies the upload.
func stateFile(dir, server, workspaceID, source, target string) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{server, workspaceID, source, target}, "\x00")))
	return filepath.Join(dir, hex.EncodeToString(sum[:16])+".json")
}

// readState reads the state at path: nil when there is none. A file that
// does not parse is removed and counts as none; it can only be the
// remains of a crash.
func readState(path string) (*uploadState, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read upload state: %w", err)
	}
	var s uploadState
	if err := json.Unmarshal(data, &s); err != nil || s.Version != stateVersion || s.Key == "" || s.UploadID == "" {
		_ = os.Remove(path) // unreadable: start over, as without it
		return nil, nil
	}
	s.file = path
	return &s, nil
}

// save writes the state atomically: a temporary file in the same
// directory, flushed, then renamed over the old one. The directory is
// the user's alone (0700), the file too (0600).
func (s *uploadState) save() error {
	return writeJSONFile(s.file, s)
}

// remove forgets the state; an absent file is fine.
func (s *uploadState) remove() {
	_ = os.Remove(s.file) // best effort: a stale file is refused by its fingerprint or by the server later
}

// writeJSONFile writes v to path atomically, creating its directory
// (0700) if needed; the file is 0600.
func writeJSONFile(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*") // 0600
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// PendingUpload is an unfinished multipart upload an earlier run left
// behind. Running the same Upload (same workspace, file and name) or
// Replace (same artifact and file) again resumes it.
type PendingUpload struct {
	Server      string
	WorkspaceID string
	Path        string  // the source file, absolute
	Name        string  // the new artifact's name (an upload), or ""
	Description *string // the new artifact's description (an upload)
	ArtifactID  string  // the artifact whose content it replaces (a replace), or ""
	Size        int64   // the source's size when the upload started
	PartSize    int64
	PartCount   int
	StartedAt   time.Time
	// SourceChanged: the file is gone or no longer the one the upload
	// started from; running it again starts over.
	SourceChanged bool

	state *uploadState
}

// PendingUploads lists the unfinished multipart uploads of this client's
// server kept in stateDir ("" is DefaultStateDir), oldest first. How much
// of each the store holds is known only by asking: PendingProgress.
func (c *Client) PendingUploads(stateDir string) ([]PendingUpload, error) {
	dir, err := resolveStateDir(stateDir)
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []PendingUpload
	for _, f := range files {
		s, err := readState(f)
		if err != nil {
			return nil, err
		}
		if s == nil || s.Server != c.base.String() {
			continue
		}
		fp, ferr := statFingerprint(s.Source)
		out = append(out, PendingUpload{Server: s.Server, WorkspaceID: s.WorkspaceID, Path: s.Source, Name: s.Name,
			Description: s.Description, ArtifactID: s.ArtifactID, Size: s.Fingerprint.Size, PartSize: s.PartSize,
			PartCount: s.PartCount, StartedAt: s.StartedAt, SourceChanged: ferr != nil || fp != s.Fingerprint, state: s})
	}
	slices.SortFunc(out, func(a, b PendingUpload) int { return a.StartedAt.Compare(b.StartedAt) })
	return out, nil
}

// PendingProgress asks the server how much of a pending upload the store
// holds: parts and bytes. An upload the store no longer has is
// staging_not_found.
func (c *Client) PendingProgress(ctx context.Context, p PendingUpload) (parts int, bytes int64, err error) {
	if p.state == nil {
		return 0, 0, errors.New("not a pending upload of PendingUploads")
	}
	stored, err := c.UploadedParts(ctx, p.WorkspaceID, p.state.Key, p.state.UploadID)
	if err != nil {
		return 0, 0, err
	}
	for _, sp := range stored {
		bytes += sp.Size
	}
	return len(stored), bytes, nil
}

// DiscardUpload aborts a pending upload (its parts are discarded at once,
// not left for the maintainer) and forgets its state. Discarding one the
// server no longer has succeeds.
func (c *Client) DiscardUpload(ctx context.Context, p PendingUpload) error {
	if p.state == nil {
		return errors.New("not a pending upload of PendingUploads")
	}
	if err := c.AbortUpload(ctx, p.WorkspaceID, p.state.Key, p.state.UploadID); err != nil {
		return err
	}
	p.state.remove()
	return nil
}

func resolveStateDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	return DefaultStateDir()
}
