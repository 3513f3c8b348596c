package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
)

// The client commands' exit codes (docs/cli.md lists them).
const (
	exitFailed      exitError = 1 // anything else
	exitUsage       exitError = 2 // a bad flag, argument or combination
	exitNotFound    exitError = 3 // 404
	exitConflict    exitError = 4 // 409, 412
	exitNotAllowed  exitError = 5 // 401, 403
	exitUnavailable exitError = 6 // 502, 503, 504, or no answer at all
)

// usageError is a mistake in how a command was called; it carries exit
// code 2 itself, since cobra returns argument and flag errors to main
// before a command runs.
type usageError struct{ err error }

func (e *usageError) Error() string   { return e.err.Error() }
func (e *usageError) Unwrap() []error { return []error{e.err, exitUsage} }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// usage wraps an argument validator so that its refusal exits 2.
func usage(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return &usageError{fmt.Errorf("%w; see '%s --help'", err, cmd.CommandPath())}
		}
		return nil
	}
}

// flagUsage is the flag-error function of the client commands: a bad flag
// exits 2.
func flagUsage(cmd *cobra.Command, err error) error {
	return &usageError{fmt.Errorf("%w; see '%s --help'", err, cmd.CommandPath())}
}

// commandError is what a client command returns: the message main prints,
// and the exit code main exits with.
type commandError struct {
	err  error
	code exitError
}

func (e *commandError) Error() string   { return describe(e.err) }
func (e *commandError) Unwrap() []error { return []error{e.err, e.code} }

// failure gives err its exit code; nil stays nil.
func failure(err error) error {
	if err == nil {
		return nil
	}
	if _, done := errors.AsType[*commandError](err); done {
		return err
	}
	return &commandError{err: err, code: exitCodeOf(err)}
}

// exitCodeOf maps an error to the exit-code table: by the HTTP status of a
// server's answer, by the reason of a local *cairn.Error, 6 when nothing
// answered.
func exitCodeOf(err error) exitError {
	if _, ok := errors.AsType[*usageError](err); ok {
		return exitUsage
	}
	if client.IsUnreachable(err) {
		return exitUnavailable
	}
	ce, ok := errors.AsType[*cairn.Error](err)
	if !ok {
		return exitFailed
	}
	status := ce.Status
	if status == 0 {
		status = localStatus(ce.Reason)
	}
	switch status {
	case http.StatusNotFound:
		return exitNotFound
	case http.StatusConflict, http.StatusPreconditionFailed:
		// A file changed since its etag was read (412) is a conflict with
		// another writer, as a target that exists is (409).
		return exitConflict
	case http.StatusUnauthorized, http.StatusForbidden:
		return exitNotAllowed
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return exitUnavailable
	}
	return exitFailed
}

// localStatus is the status a reason would have had from the server, for
// errors the client itself decided (a store's refusal, a missing object, a
// snapshot name a workspace does not have).
func localStatus(r cairn.Reason) int {
	status, _ := r.HTTPStatus()
	return status
}

// describe is the one line main prints after "cairn: ".
func describe(err error) string {
	if errors.Is(err, context.Canceled) {
		return "interrupted"
	}
	ce, ok := errors.AsType[*cairn.Error](err)
	if !ok {
		return err.Error()
	}
	var b strings.Builder
	if ce.Message != "" && !strings.HasPrefix(ce.Message, "HTTP ") {
		b.WriteString(ce.Message)
		if ce.Detail != "" {
			b.WriteString(": ")
		}
	}
	b.WriteString(ce.Detail)
	var notes []string
	if ce.Reason != "" {
		notes = append(notes, string(ce.Reason))
	}
	if ce.Status != 0 {
		notes = append(notes, fmt.Sprintf("HTTP %d", ce.Status))
	}
	if ce.RequestID != "" {
		notes = append(notes, "request "+ce.RequestID)
	}
	if len(notes) > 0 {
		b.WriteString(" (" + strings.Join(notes, ", ") + ")")
	}
	return b.String()
}
