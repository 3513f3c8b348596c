package cairn

import (
	"net/http"
	"slices"
)

// StatusClientGone is the status the access log gives a request whose client
// hung up before the answer (nginx's 499). It is never sent.
const StatusClientGone = 499

// reasonStatus is the one table from reason to HTTP status. The REST
// envelope, the websocket refusals, the test fakes and the OpenAPI document's
// test all read it through HTTPStatus.
var reasonStatus = map[Reason]int{
	ReasonInvalidJSON:       http.StatusBadRequest,
	ReasonInvalidParameters: http.StatusBadRequest,
	ReasonInvalidQuery:      http.StatusBadRequest,
	ReasonInvalidName:       http.StatusBadRequest,
	ReasonListTooLarge:      http.StatusBadRequest,
	ReasonInvalidChecksum:   http.StatusBadRequest,
	ReasonObjectTooLarge:    http.StatusBadRequest,
	ReasonStagingKeyInvalid: http.StatusBadRequest,
	ReasonStagingNotFound:   http.StatusBadRequest,
	ReasonUploadIncomplete:  http.StatusBadRequest,
	ReasonChecksumMismatch:  http.StatusBadRequest,
	ReasonDigestRequired:    http.StatusBadRequest,
	ReasonStagingKeyUsed:    http.StatusConflict,
	ReasonInvalidPath:       http.StatusBadRequest,
	ReasonPathOutsideMount:  http.StatusBadRequest,
	ReasonPathIsMountRoot:   http.StatusBadRequest,
	ReasonVolumeNotReady:    http.StatusBadRequest,
	ReasonSourceNotFound:    http.StatusBadRequest,
	ReasonSourceIsDirectory: http.StatusBadRequest,
	ReasonSourceNotRegular:  http.StatusBadRequest,
	ReasonSourceUnreadable:  http.StatusBadRequest,
	ReasonSourceChanged:     http.StatusBadRequest,
	ReasonTargetDirMissing:  http.StatusBadRequest,
	ReasonTargetIsDirectory: http.StatusBadRequest,
	ReasonWriteFailed:       http.StatusBadRequest,
	ReasonSidecarRejected:   http.StatusBadRequest,

	// The files routes and archives.
	ReasonPathIsDirectory:   http.StatusBadRequest,
	ReasonPathIsSymlink:     http.StatusBadRequest,
	ReasonPathNotRegular:    http.StatusBadRequest,
	ReasonPathUnreadable:    http.StatusBadRequest,
	ReasonRangeTooLarge:     http.StatusBadRequest,
	ReasonSourceNotDir:      http.StatusBadRequest,
	ReasonArchiveInvalid:    http.StatusBadRequest,
	ReasonArchiveUnsafePath: http.StatusBadRequest,
	ReasonArchiveTooLarge:   http.StatusBadRequest,
	ReasonArchiveRatio:      http.StatusBadRequest,
	ReasonPathNotFound:      http.StatusNotFound,
	ReasonTargetExists:      http.StatusConflict,
	ReasonFileChanged:       http.StatusPreconditionFailed,
	ReasonDirNotEmpty:       http.StatusConflict,

	ReasonIdempotencyConflict:   http.StatusConflict,
	ReasonIdempotencyInProgress: http.StatusConflict,
	ReasonWatchUnavailable:      http.StatusNotFound,
	ReasonDeliveryNotFound:      http.StatusNotFound,
	ReasonDeliveryNotFailed:     http.StatusConflict,
	ReasonSnapshotNotFound:      http.StatusNotFound,
	ReasonSnapshotCorrupt:       http.StatusConflict,
	ReasonTooManySnapshots:      http.StatusConflict,
	ReasonSnapshotTooLarge:      http.StatusConflict,
	ReasonSnapshotInUse:         http.StatusConflict,

	// The shell's refusals before the websocket upgrade.
	ReasonWebsocketRequired:   http.StatusBadRequest,
	ReasonSubprotocolRequired: http.StatusBadRequest,
	ReasonInvalidTerminal:     http.StatusBadRequest,
	ReasonShellDisabled:       http.StatusNotFound,
	ReasonVolumeMissing:       http.StatusConflict,
	ReasonTooManyShells:       http.StatusTooManyRequests,
	ReasonServerShuttingDown:  http.StatusServiceUnavailable,
	ReasonShellImageMissing:   http.StatusServiceUnavailable,

	ReasonUnauthenticated:  http.StatusUnauthorized,
	ReasonForbidden:        http.StatusForbidden,
	ReasonOriginNotAllowed: http.StatusForbidden,
	ReasonHostNotAllowed:   http.StatusForbidden,

	ReasonWorkspaceNotFound: http.StatusNotFound,
	ReasonArtifactNotFound:  http.StatusNotFound,
	ReasonShellNotFound:     http.StatusNotFound,

	// Attaching to a v2 shell.
	ReasonShellSecretRequired: http.StatusUnauthorized,
	ReasonShellSecretInvalid:  http.StatusForbidden,
	ReasonShellNotAttachable:  http.StatusConflict,

	ReasonNameTaken:     http.StatusConflict,
	ReasonVolumeExists:  http.StatusConflict,
	ReasonVolumeInUse:   http.StatusConflict,
	ReasonObjectMissing: http.StatusConflict,

	ReasonBodyTooLarge: http.StatusRequestEntityTooLarge,

	ReasonInternal:         http.StatusInternalServerError,
	ReasonNotReady:         http.StatusInternalServerError,
	ReasonSidecarFailed:    http.StatusInternalServerError,
	ReasonVolumePrepFailed: http.StatusInternalServerError,

	ReasonStoreUnavailable: http.StatusBadGateway,

	ReasonVolumeFull: http.StatusInsufficientStorage,

	ReasonDockerUnavailable:     http.StatusServiceUnavailable,
	ReasonVolumeNodeUnavailable: http.StatusServiceUnavailable,
	ReasonContainerStartTimeout: http.StatusGatewayTimeout,
	ReasonDatabaseUnavailable:   http.StatusServiceUnavailable,
	ReasonWorkspaceBusy:         http.StatusServiceUnavailable,
	ReasonSidecarBusy:           http.StatusServiceUnavailable,
	ReasonSweepBusy:             http.StatusServiceUnavailable,

	ReasonSidecarTimeout: http.StatusGatewayTimeout,

	ReasonClientGone: StatusClientGone,
}

// HTTPStatus is the status a server answers r with. A reason missing from the
// table is a bug: it answers 500 with ok false, rather than passing the
// failure off as the caller's mistake.
func (r Reason) HTTPStatus() (status int, ok bool) {
	status, ok = reasonStatus[r]
	if !ok {
		return http.StatusInternalServerError, false
	}
	return status, true
}

// VolumeRouteStatus is r's status on the routes that work inside a volume:
// the shell, exec and the files routes. There a volume that is not READY
// conflicts with the workspace's state (409), where the older transfer
// routes keep the table's 400, which their clients know; own reports such a
// departure from the table.
func (r Reason) VolumeRouteStatus() (status int, own bool) {
	if r == ReasonVolumeNotReady {
		return http.StatusConflict, true
	}
	status, _ = r.HTTPStatus()
	return status, false
}

// Reasons lists every reason that has a status, sorted.
func Reasons() []Reason {
	rs := make([]Reason, 0, len(reasonStatus))
	for r := range reasonStatus {
		rs = append(rs, r)
	}
	slices.Sort(rs)
	return rs
}
