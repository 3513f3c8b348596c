package cairn

import (
	"errors"
	"fmt"
)

// Reason is a stable, machine-readable error code. Clients branch on it; the
// accompanying detail text is for people and may change.
type Reason string

// The complete set of reasons. Adding one is an additive change.
const (
	ReasonInvalidJSON       Reason = "invalid_json"
	ReasonInvalidParameters Reason = "invalid_parameters"
	ReasonInvalidQuery      Reason = "invalid_query"
	ReasonInvalidName       Reason = "invalid_name"
	ReasonListTooLarge      Reason = "list_too_large"
	ReasonInvalidChecksum   Reason = "invalid_checksum"
	ReasonObjectTooLarge    Reason = "object_too_large"
	ReasonStagingKeyInvalid Reason = "staging_key_invalid"
	ReasonStagingNotFound   Reason = "staging_not_found"
	// ReasonStagingKeyUsed: the key already registered once (a key names
	// one artifact's content, ever).
	ReasonStagingKeyUsed Reason = "staging_key_used"
	// ReasonUploadIncomplete: a multipart upload's parts do not make the
	// declared object (a gap, a wrong total, parts the store will not
	// assemble).
	ReasonUploadIncomplete Reason = "upload_incomplete"
	// ReasonChecksumMismatch: the stored bytes' SHA-256 is not the one the
	// uploader declared.
	ReasonChecksumMismatch Reason = "checksum_mismatch"
	// ReasonDigestRequired: a streamed upload was asked of a store that
	// does not compute the SHA-256 of what it receives; send the digest.
	ReasonDigestRequired    Reason = "digest_required"
	ReasonInvalidPath       Reason = "invalid_path"
	ReasonPathOutsideMount  Reason = "path_outside_mount"
	ReasonPathIsMountRoot   Reason = "path_is_mount_root"
	ReasonVolumeNotReady    Reason = "volume_not_ready"
	ReasonSourceNotFound    Reason = "source_not_found"
	ReasonSourceIsDirectory Reason = "source_is_directory"
	ReasonSourceNotRegular  Reason = "source_not_regular"
	ReasonSourceUnreadable  Reason = "source_unreadable"
	ReasonSourceChanged     Reason = "source_changed"
	ReasonTargetDirMissing  Reason = "target_dir_missing"
	ReasonTargetIsDirectory Reason = "target_is_directory"
	ReasonWriteFailed       Reason = "write_failed"
	// ReasonVolumeFull: the workspace volume (or the user's quota on it)
	// has no room for what a load or an unpack writes; nothing of the
	// failed write is left behind.
	ReasonVolumeFull        Reason = "volume_full"
	ReasonSidecarRejected   Reason = "sidecar_rejected"
	ReasonUnauthenticated   Reason = "unauthenticated"
	ReasonForbidden         Reason = "forbidden"
	ReasonOriginNotAllowed  Reason = "origin_not_allowed"
	ReasonHostNotAllowed    Reason = "host_not_allowed"
	ReasonWorkspaceNotFound Reason = "workspace_not_found"
	ReasonArtifactNotFound  Reason = "artifact_not_found"
	ReasonShellNotFound     Reason = "shell_not_found"
	ReasonNameTaken         Reason = "name_taken"
	ReasonVolumeExists      Reason = "volume_exists"
	ReasonVolumeInUse       Reason = "volume_in_use"
	ReasonObjectMissing     Reason = "object_missing"
	ReasonBodyTooLarge      Reason = "body_too_large"
	ReasonInternal          Reason = "internal"
	ReasonNotReady          Reason = "not_ready"
	ReasonSidecarFailed     Reason = "sidecar_failed"
	ReasonVolumePrepFailed  Reason = "volume_prep_failed"
	ReasonStoreUnavailable  Reason = "store_unavailable"
	ReasonDockerUnavailable Reason = "docker_unavailable"
	// ReasonVolumeNodeUnavailable: a workspace volume that one node holds
	// (ReadWriteOnce on Kubernetes) is on a node that cannot take pods now.
	ReasonVolumeNodeUnavailable Reason = "volume_node_unavailable"
	// ReasonContainerStartTimeout: the runtime did not start a session's or
	// a sidecar's container (a Kubernetes pod) within its start timeout.
	ReasonContainerStartTimeout Reason = "container_start_timeout"
	// ReasonDatabaseUnavailable: Postgres refused, dropped or did not hand
	// out a connection in time — an outage, told apart from a bug.
	ReasonDatabaseUnavailable Reason = "database_unavailable"
	ReasonWorkspaceBusy       Reason = "workspace_busy"
	ReasonSidecarBusy         Reason = "sidecar_busy"
	ReasonSweepBusy           Reason = "sweep_busy"
	ReasonSidecarTimeout      Reason = "sidecar_timeout"
	// Shell reasons.
	ReasonShellDisabled       Reason = "shell_disabled"
	ReasonServerShuttingDown  Reason = "server_shutting_down"
	ReasonWebsocketRequired   Reason = "websocket_required"
	ReasonSubprotocolRequired Reason = "subprotocol_required"
	ReasonInvalidTerminal     Reason = "invalid_terminal"
	ReasonTooManyShells       Reason = "too_many_shells"
	ReasonVolumeMissing       Reason = "volume_missing"
	ReasonShellImageMissing   Reason = "shell_image_missing"
	// ReasonClientGone is never sent: it names, in the log, a request whose
	// client hung up before the answer (status 499 there, as nginx does).
	ReasonClientGone Reason = "client_gone"
)

// Reasons of the volume-files capability.
const (
	ReasonPathNotFound      Reason = "path_not_found"
	ReasonPathIsDirectory   Reason = "path_is_directory"
	ReasonPathIsSymlink     Reason = "path_is_symlink"
	ReasonPathNotRegular    Reason = "path_not_regular"
	ReasonPathUnreadable    Reason = "path_unreadable"
	ReasonRangeTooLarge     Reason = "range_too_large"
	ReasonSourceNotDir      Reason = "source_not_directory"
	ReasonArchiveInvalid    Reason = "archive_invalid"
	ReasonArchiveUnsafePath Reason = "archive_unsafe_path"
	ReasonArchiveTooLarge   Reason = "archive_too_large"
	ReasonArchiveRatio      Reason = "archive_ratio"
	ReasonTargetExists      Reason = "target_exists"
	// ReasonFileChanged: a write's If-Match names an ETag the file no
	// longer has.
	ReasonFileChanged Reason = "file_changed"
	// ReasonDirNotEmpty: a directory to remove or replace holds files.
	ReasonDirNotEmpty Reason = "directory_not_empty"
	// ReasonIdempotencyConflict: an Idempotency-Key came back with
	// another request than the one it was first sent with.
	ReasonIdempotencyConflict Reason = "idempotency_conflict"
	// ReasonIdempotencyInProgress: the first request of the key still runs.
	ReasonIdempotencyInProgress Reason = "idempotency_in_progress"
	// ReasonWatchUnavailable: this server cannot watch a volume's files.
	ReasonWatchUnavailable Reason = "watch_unavailable"
	// ReasonDeliveryNotFound: no webhook delivery has this ID (any more).
	ReasonDeliveryNotFound Reason = "delivery_not_found"
	// ReasonDeliveryNotFailed: only a FAILED delivery can be sent again.
	ReasonDeliveryNotFailed Reason = "delivery_not_failed"
	// ReasonSnapshotNotFound: no snapshot has this ID (any more).
	ReasonSnapshotNotFound Reason = "snapshot_not_found"
	// ReasonSnapshotCorrupt: a snapshot's manifest or content in the store
	// no longer hashes to its recorded digest; a restore of it changed
	// nothing.
	ReasonSnapshotCorrupt Reason = "snapshot_corrupt"
	// ReasonSnapshotTooLarge: the volume holds more entries than a
	// snapshot records (200 000), or a manifest past 64 MiB.
	ReasonSnapshotTooLarge Reason = "snapshot_too_large"
	// ReasonSnapshotInUse: the snapshot holds an archived workspace's
	// volume; it goes once that workspace's volume is set up again.
	ReasonSnapshotInUse Reason = "snapshot_in_use"
	// ReasonTooManySnapshots: the workspace holds MaxSnapshotsPerWorkspace.
	ReasonTooManySnapshots Reason = "too_many_snapshots"
)

// Error is the one error type that crosses cairn's layers. Detail is written
// for the caller and must never carry SQL, stack traces, host paths, store
// keys of another workspace or presigned URLs; Err is the internal cause,
// logged where the error is handled and never shown to a client.
//
// Status, Message and RequestID are filled by a remote client from the
// response (the HTTP status, the route's fixed sentence, the request ID);
// the server leaves them zero and derives the status from Reason.
type Error struct {
	Reason Reason
	Detail string
	Err    error

	Status    int
	Message   string
	RequestID string
}

// Errorf returns an *Error with the given reason and a client-safe detail.
func Errorf(reason Reason, format string, args ...any) *Error {
	return &Error{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// Internal wraps an unexpected failure. The client sees only detail; cause is
// kept for the log.
func Internal(detail string, cause error) *Error {
	return &Error{Reason: ReasonInternal, Detail: detail, Err: cause}
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Reason, e.Detail, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Reason, e.Detail)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrorReason returns the reason of err, or ReasonInternal when err is not
// (and does not wrap) an *Error.
func ErrorReason(err error) Reason {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Reason
	}
	return ReasonInternal
}

// ErrorDetail returns the client-safe detail of err. An error that is not an
// *Error is unexpected, so its text stays internal.
func ErrorDetail(err error) string {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Detail
	}
	return "internal error"
}

// ErrorRequestID returns the request ID a server error came back with, or
// "" for an error that is not (and does not wrap) an *Error.
func ErrorRequestID(err error) string {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.RequestID
	}
	return ""
}
