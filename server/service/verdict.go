package service

import (
	"errors"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/sidecar"
)

// sidecarURLSlack is how much longer than a sidecar run a URL handed to it
// stays valid.
const sidecarURLSlack = 60 * time.Second

// transferVerdict judges a put or download: success needs ok and exit
// code 0; a failure is classified by the line's reason.
func transferVerdict(command string, res *sidecar.Result, run *SidecarRun, urls ...string) error {
	switch {
	case res.OK && run.ExitCode == 0:
		return nil
	case res.OK:
		return cairn.Errorf(cairn.ReasonSidecarFailed, "the %s sidecar reported success but exited %d", command, run.ExitCode)
	case res.ReasonText() == "":
		return cairn.Errorf(cairn.ReasonSidecarRejected, "%s", sidecar.Redact(res.ErrorText(), urls...))
	}
	return classify(res.ReasonText(), res.ErrorText(), urls...)
}

// classify maps a sidecar's failure reason to the API's: the
// caller's mistakes keep their reason, store trouble is store_unavailable,
// a vanished object is object_missing, the rest is the sidecar failing.
func classify(reason, message string, urls ...string) error {
	detail := sidecar.Redact(message, urls...)
	switch reason {
	case sidecar.ReasonSourceNotFound, sidecar.ReasonSourceIsDirectory, sidecar.ReasonSourceNotRegular,
		sidecar.ReasonSourceUnreadable, sidecar.ReasonSourceChanged, sidecar.ReasonPathOutsideMount,
		sidecar.ReasonPathIsMountRoot, sidecar.ReasonTargetDirMissing, sidecar.ReasonTargetIsDirectory,
		sidecar.ReasonWriteFailed, sidecar.ReasonSourceNotDir, sidecar.ReasonTargetExists,
		sidecar.ReasonArchiveInvalid, sidecar.ReasonArchiveUnsafePath, sidecar.ReasonArchiveTooLarge,
		sidecar.ReasonArchiveRatio, sidecar.ReasonSidecarRejected, sidecar.ReasonVolumeFull:
		return cairn.Errorf(cairn.Reason(reason), "%s", detail)
	case sidecar.ReasonObjectNotFound:
		return cairn.Errorf(cairn.ReasonObjectMissing, "%s", detail)
	case sidecar.ReasonObjectTooLarge:
		return cairn.Errorf(cairn.ReasonObjectTooLarge, "%s", detail)
	case sidecar.ReasonStoreRejected, sidecar.ReasonStoreError, sidecar.ReasonStoreUnreachable:
		return cairn.Errorf(cairn.ReasonStoreUnavailable, "%s", detail)
	default:
		return cairn.Errorf(cairn.ReasonSidecarFailed, "the sidecar failed (%s): %s", reason, detail)
	}
}

// noResultLine reports a sidecar that printed nothing decodable, quoting its
// output with the URL redacted.
func noResultLine(command string, run *SidecarRun, urls ...string) error {
	return cairn.Errorf(cairn.ReasonSidecarFailed, "'%s' sidecar produced no parseable result line (exit code %d); output: %s",
		command, run.ExitCode, sidecar.Redact(string(run.Output), urls...))
}

// redactError keeps a URL out of an error a runtime returned, wherever the
// *cairn.Error sits in the chain. The cause chain stays (a cancellation is
// still a cancellation); only its text is redacted.
func redactError(err error, urls ...string) error {
	e, ok := errors.AsType[*cairn.Error](err)
	if !ok || len(urls) == 0 {
		return err
	}
	return &cairn.Error{Reason: e.Reason, Detail: sidecar.Redact(e.Detail, urls...),
		Err: &redacted{text: sidecar.Redact(err.Error(), urls...), err: err}}
}

// redacted is an error whose text had a URL taken out, over its original.
type redacted struct {
	text string
	err  error
}

func (r *redacted) Error() string { return r.text }
func (r *redacted) Unwrap() error { return r.err }
