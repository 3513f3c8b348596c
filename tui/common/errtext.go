package common

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/cairn-dev/cairn"
)

// Subject is what an error sentence talks about.
type Subject struct {
	Workspace string // workspace name
	Artifact  string // artifact name
	Name      string // the name asked for (name_taken)
	Scope     string // the token scope the call needed: read or write
	Mounts    int    // running containers, when known
}

// Sentence turns an error into the one sentence of TUI.md §3.3. The
// server's message and request ID go to the log, not here (except for
// unexpected errors, where the request ID is the only handle).
func Sentence(err error, s Subject) string {
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

func byReason(e *cairn.Error, s Subject) (string, bool) {
	switch e.Reason {
	case cairn.ReasonNameTaken:
		if s.Artifact != "" {
			return fmt.Sprintf("%s already has an artifact named %s", s.Workspace, s.Name), true
		}
		return fmt.Sprintf("a workspace named %s already exists", s.Name), true
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
	case cairn.ReasonInvalidName, cairn.ReasonInvalidParameters:
		if e.Detail != "" {
			return e.Detail, true
		}
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
// invalid_name, invalid_parameters) and which one.
func FieldError(err error) (field string, ok bool) {
	switch cairn.ErrorReason(err) {
	case cairn.ReasonNameTaken, cairn.ReasonInvalidName:
		return "name", true
	case cairn.ReasonInvalidParameters:
		return "description", true
	}
	return "", false
}
