// Package errtext turns cairn-tui's errors into the one sentence an
// operator reads (a toast, a banner, the line under a form field): what
// went wrong and what to do, never the server's message or a stack of
// wrapped causes. The server's detail goes to the message log instead;
// where a sentence quotes it (it names the value refused), it is
// sanitised, since toasts show their text as it is.
package errtext

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/termkit"
)

// Subject is what an error sentence talks about.
type Subject struct {
	Workspace string // workspace name
	Artifact  string // artifact name
	Snapshot  string // snapshot name
	Name      string // the name asked for (name_taken)
	Scope     string // the token scope the call needed: read or write
	Mounts    int    // running containers, when known
}

// Sentence turns an error into the operator's one sentence about it. The
// server's message and request ID go to the log, not here (except for
// unexpected errors, where the request ID is the only handle).
func Sentence(err error, s Subject) string {
	if su, ok := errors.AsType[*client.StoreUnreachableError](err); ok {
		return StoreUnreachableSentence(su.Host)
	}
	var e *cairn.Error
	if !errors.As(err, &e) {
		return "cannot reach the server — " + cause(err)
	}
	if text, ok := byReason(e, s); ok {
		return text
	}
	switch e.Status {
	case http.StatusNotFound:
		return gone(s) + " no longer exists"
	case http.StatusBadGateway, http.StatusServiceUnavailable:
		return "object store unavailable — try again"
	case 0:
		if e.Reason == cairn.ReasonInternal {
			return "cannot reach the server — " + e.Error()
		}
		return fmt.Sprintf("server error (%s) — request ID %s", e.Reason, orDash(e.RequestID))
	}
	return fmt.Sprintf("server error (HTTP %d) — request ID %s", e.Status, orDash(e.RequestID))
}

// StoreUnreachableSentence is the sentence of a presigned PUT or GET that
// could not reach the object store at host: the server presigned for an
// endpoint this machine cannot reach.
func StoreUnreachableSentence(host string) string {
	return "cannot reach the object store at " + host + " — the server's artifact.s3.presignEndpoint must be reachable from clients"
}

func byReason(e *cairn.Error, s Subject) (string, bool) {
	switch e.Reason {
	case cairn.ReasonNameTaken:
		return nameTaken(e, s), true
	case cairn.ReasonVolumeInUse:
		return mountedSentence(s.Mounts), true
	case cairn.ReasonWorkspaceNotFound, cairn.ReasonArtifactNotFound:
		return gone(s) + " no longer exists", true
	case cairn.ReasonStagingNotFound:
		return "upload did not reach the store — retry", true
	case cairn.ReasonUnauthenticated:
		return "token rejected — check CAIRN_TOKEN or the config file", true
	case cairn.ReasonForbidden:
		return fmt.Sprintf("this token lacks the %s scope", scopeOf(s)), true
	case cairn.ReasonStoreUnavailable:
		return "object store unavailable — try again", true
	case cairn.ReasonDockerUnavailable:
		return "Docker is unavailable on the server — try again", true
	case cairn.ReasonWorkspaceBusy, cairn.ReasonSidecarBusy:
		return gone(s) + " is busy with another operation — try again", true
	case cairn.ReasonVolumeExists:
		return gone(s) + " still has a volume — tear it down first", true
	case cairn.ReasonInvalidName, cairn.ReasonInvalidParameters, cairn.ReasonVolumeNodeUnavailable:
		if e.Detail != "" { // names what was wrong: the value, the node
			return termkit.Sanitize(e.Detail), true
		}
	case cairn.ReasonObjectMissing:
		return gone(s) + " is MISSING_OBJECT — its object is gone from the store", true
	case cairn.ReasonObjectTooLarge:
		return "too large for the store's single upload (artifact.store.maxObjectSize)", true
	case cairn.ReasonBodyTooLarge:
		return "larger than one request may be — past files.write.maxBytes a file goes in as an artifact (u), then L", true
	case cairn.ReasonSidecarTimeout:
		return "the server's transfer container ran out of time — try again", true
	case cairn.ReasonSidecarFailed, cairn.ReasonSidecarRejected:
		return fmt.Sprintf("the server's transfer container failed — request ID %s", orDash(e.RequestID)), true
	case cairn.ReasonVolumeNotReady:
		return gone(Subject{Workspace: s.Workspace}) + " has no volume — v provisions one", true
	case cairn.ReasonArchiveUnsafePath:
		// The server names the entry and what is wrong with it, for a
		// pack (a name no unpack would take) as for an unpack.
		if e.Detail != "" {
			return termkit.Sanitize(e.Detail) + " — nothing was written", true
		}
	}
	if text, ok := volumeText(e.Reason); ok {
		return text, true
	}
	if text, ok := snapshotText(e.Reason, s); ok {
		return text, true
	}
	if text, ok := archiveText(e.Reason); ok {
		return text, true
	}
	return shellText(e)
}

// nameTaken says which name is taken: an artifact's, a snapshot's, or a
// workspace's. A fork asks for both a workspace and its snapshot
// (fork-<name>); only the server's detail tells which one was taken.
func nameTaken(e *cairn.Error, s Subject) string {
	switch {
	case s.Artifact != "":
		return fmt.Sprintf("%s already has an artifact named %s", s.Workspace, s.Name)
	case s.Snapshot != "" && !strings.Contains(e.Detail, "a workspace named"):
		return fmt.Sprintf("%s already has a snapshot named %s", s.Workspace, s.Snapshot)
	}
	return fmt.Sprintf("a workspace named %s already exists", s.Name)
}

// snapshotText is the sentence of a snapshot's refusal.
func snapshotText(r cairn.Reason, s Subject) (string, bool) {
	switch r {
	case cairn.ReasonSnapshotNotFound:
		return snapshotOf(s) + " no longer exists", true
	case cairn.ReasonSnapshotCorrupt:
		return snapshotOf(s) + " no longer matches its content in the store — nothing was changed", true
	case cairn.ReasonTooManySnapshots:
		return fmt.Sprintf("%s holds %s snapshots, the most a workspace may — delete some first", gone(Subject{Workspace: s.Workspace}),
			termkit.Count(cairn.MaxSnapshotsPerWorkspace)), true
	}
	return "", false
}

func snapshotOf(s Subject) string {
	if s.Snapshot == "" {
		return "the snapshot"
	}
	return "snapshot " + s.Snapshot
}

// archiveText is the sentence of an unpack's refusal of the archive
// itself: nothing was written.
func archiveText(r cairn.Reason) (string, bool) {
	text, ok := map[cairn.Reason]string{
		cairn.ReasonArchiveInvalid:    "the artifact is not a readable tar.gz or zip archive — nothing was written",
		cairn.ReasonArchiveUnsafePath: "the archive holds an unsafe path (absolute, .., or through a link) — nothing was written",
		cairn.ReasonArchiveTooLarge:   "the archive unpacks past the server's limits (entries or bytes) — nothing was written",
		cairn.ReasonArchiveRatio:      "the archive compresses past the server's ratio limit — nothing was written",
	}[r]
	return text, ok
}

// volumeText is the sentence of a volume path or file refusal, as it
// shows under the path field.
func volumeText(r cairn.Reason) (string, bool) {
	text, ok := map[cairn.Reason]string{
		cairn.ReasonPathOutsideMount:  "the path must be inside " + cairn.MountPath,
		cairn.ReasonPathIsMountRoot:   "that is the mount point itself — name a file inside it",
		cairn.ReasonInvalidPath:       "the path holds a control character, is not UTF-8 or is too long",
		cairn.ReasonSourceNotFound:    "no such file in the volume",
		cairn.ReasonSourceIsDirectory: "that is a directory — name a single file",
		cairn.ReasonSourceNotRegular:  "not a regular file (a FIFO, socket or device)",
		cairn.ReasonSourceUnreadable:  "the file cannot be read in the volume",
		cairn.ReasonSourceChanged:     "the file changed while it was being stored — retry",
		cairn.ReasonTargetDirMissing:  "its directory does not exist in the volume — create it first (a shell can)",
		cairn.ReasonTargetIsDirectory: "that is a directory — name a file",
		cairn.ReasonWriteFailed:       "the file could not be written (is the volume full?)",
		cairn.ReasonVolumeFull:        "the volume is full — free some room and retry; nothing was changed",
		cairn.ReasonPathNotFound:      "no such file or directory in the volume",
		cairn.ReasonPathIsDirectory:   "that is a directory — name a file",
		cairn.ReasonPathIsSymlink:     "that is a symlink — cairn never follows links; name its target",
		cairn.ReasonPathNotRegular:    "not a regular file (a FIFO, socket or device)",
		cairn.ReasonPathUnreadable:    "it cannot be read in the volume (its permissions?)",
		cairn.ReasonRangeTooLarge:     "one read returns at most 1 MiB — save the file as an artifact to get it whole",
		cairn.ReasonSourceNotDir:      "that is not a directory — clear the format to save a single file",
		cairn.ReasonTargetExists:      "it exists already in the volume — choose a new name",
		cairn.ReasonFileChanged:       "it changed in the volume since it was read — r lists it again",
		cairn.ReasonDirNotEmpty:       "the directory is not empty",
	}[r]
	return text, ok
}

// VolumeSentence is the sentence of a volume path refusal.
func VolumeSentence(err error) string {
	if text, ok := volumeText(cairn.ErrorReason(err)); ok {
		return text
	}
	return cairn.ErrorDetail(err)
}

// shellText is the sentence of a shell refusal, which comes before the
// websocket upgrade.
func shellText(e *cairn.Error) (string, bool) {
	switch e.Reason {
	case cairn.ReasonShellDisabled:
		return "the server has the shell turned off (shell.enable)", true
	case cairn.ReasonTooManyShells:
		return "too many shells are open on the server — end one first", true
	case cairn.ReasonShellImageMissing:
		return "the shell image is missing on the server — make images builds it", true
	case cairn.ReasonVolumeMissing:
		return "the workspace's Docker volume is gone — v provisions it again", true
	case cairn.ReasonServerShuttingDown:
		return "the server is shutting down — try again later", true
	case cairn.ReasonInvalidTerminal:
		return "the server refused this terminal: " + termkit.Sanitize(e.Detail), true
	}
	return "", false
}

// mountedSentence is the refusal of a teardown while containers mount the
// volume.
func mountedSentence(n int) string {
	switch {
	case n == 1:
		return "volume is mounted by 1 running container — end its shell or tool run first"
	case n > 1:
		return fmt.Sprintf("volume is mounted by %d running containers — end their shells or tool runs first", n)
	}
	return "volume is mounted by running containers — end their shells or tool runs first"
}

// TooLargeToEdit is the refusal to edit a volume file past what one read
// returns: it is edited elsewhere, through an artifact.
func TooLargeToEdit(name string, size int64) string {
	return fmt.Sprintf("%s is %s, more than one read returns (%s) — i saves it as an artifact to edit elsewhere",
		name, termkit.Size(size), termkit.Size(cairn.MaxFileReadBytes))
}

// MountedSentence is the guard's refusal before any request.
func MountedSentence(n int) string { return mountedSentence(n) }

func gone(s Subject) string {
	switch {
	case s.Artifact != "":
		return s.Artifact
	case s.Workspace != "":
		return s.Workspace
	}
	return "it"
}

func scopeOf(s Subject) string {
	if s.Scope == "" {
		return "write"
	}
	return s.Scope
}

// cause is the innermost part of a wrapped error's text ("connection
// refused"), the part an operator acts on.
func cause(err error) string {
	text := err.Error()
	if i := strings.LastIndex(text, ": "); i >= 0 && i+2 < len(text) {
		return text[i+2:]
	}
	return text
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// FieldError reports whether err belongs under a form field (name_taken,
// invalid_name, invalid_parameters — the description, or the volume size
// when the server names size_bytes —, the volume path and file refusals)
// and which one.
func FieldError(err error) (field string, ok bool) {
	switch r := cairn.ErrorReason(err); r {
	case cairn.ReasonNameTaken, cairn.ReasonInvalidName:
		return "name", true
	case cairn.ReasonInvalidParameters:
		// The only other field a refused parameter can be is the new
		// workspace's volume size, which the server names.
		if strings.Contains(cairn.ErrorDetail(err), "size_bytes") {
			return "size", true
		}
		return "description", true
	default:
		if _, isPath := volumeText(r); isPath {
			return "path", true
		}
	}
	return "", false
}
