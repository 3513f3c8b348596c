package wsexec

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/ptyshell"
)

// Subprotocol is the websocket subprotocol of v1.
const Subprotocol = "cairn.exec.v1"

// ArgvHeader carries the command: base64url (no padding) of a JSON array.
const ArgvHeader = "Cairn-Exec-Argv"

// Channels, the first byte of every message.
const (
	ChannelStdin  byte = 0x00
	ChannelStdout byte = 0x01
	ChannelStderr byte = 0x02
	ChannelStatus byte = 0x03
	// ChannelSignal carries a signal's name (INT, TERM, …) to the command.
	ChannelSignal byte = 0x04
	ChannelClose  byte = 0xFF
)

// Signals a client may send, by name without "SIG": the shell's.
var Signals = ptyshell.SignalNames

// Limits.
const (
	// MaxDataPayload bounds a stdin, stdout or stderr payload.
	MaxDataPayload = 32 << 10
	// MaxStatusPayload bounds the status frame's JSON.
	MaxStatusPayload = 4 << 10
	// ReadLimit is the largest message either end reads.
	ReadLimit = 64 << 10
	// MaxArgs and MaxArgvBytes bound the argv (its JSON form).
	MaxArgs      = 256
	MaxArgvBytes = 64 << 10
	// HandshakeTimeout bounds the dial and the upgrade, as for the shell.
	HandshakeTimeout = ptyshell.HandshakeTimeout
)

// Reason says why a command ended. It is the shell's (package ptyshell):
// an exec ends the ways a shell does, with the same words on the wire
// and the same close code after each, less the shell's idle end and its
// v2 endings.
type Reason = ptyshell.Reason

// Reasons of the status frame.
const (
	ReasonExited         = ptyshell.ReasonExited
	ReasonOOMKilled      = ptyshell.ReasonOOMKilled
	ReasonMaxLifetime    = ptyshell.ReasonMaxLifetime
	ReasonTimeout        = ptyshell.ReasonTimeout
	ReasonTerminated     = ptyshell.ReasonTerminated
	ReasonServerShutdown = ptyshell.ReasonServerShutdown
	ReasonProtocolError  = ptyshell.ReasonProtocolError
	ReasonError          = ptyshell.ReasonError
)

// Reasons of an ending without a status frame: audit only.
const (
	ReasonClientClosed = ptyshell.ReasonClientClosed
	ReasonClientGone   = ptyshell.ReasonClientGone
)

// ExitCodeRuntime is docker run's code for a failure that is not the
// command's: the status when the command's own is unknown.
const ExitCodeRuntime = ptyshell.ExitCodeRuntime

// Status is the payload of the status frame.
type Status struct {
	ExitCode int    `json:"exit_code"`
	Reason   Reason `json:"reason"`
	Message  string `json:"message,omitempty"`
}

// Causes that select the reason when Serve's context is cancelled with
// context.WithCancelCause, the shell's: any other cause means
// ErrServerShutdown.
var (
	ErrTerminated     = ptyshell.ErrTerminated
	ErrServerShutdown = ptyshell.ErrServerShutdown
)

// ErrConnectionLost is what Run returns when the connection ended without
// a status frame: the command's status is unknown, never 0.
var ErrConnectionLost = errors.New("connection lost before the command's exit status arrived")

// ErrUnsupportedProtocol is what a client reports for a 101 that does not
// name Subprotocol.
var ErrUnsupportedProtocol = errors.New("the server speaks an unsupported exec protocol")

// EncodeArgv returns the header value of argv, checked as DecodeArgv
// checks it.
func EncodeArgv(argv []string) (string, error) {
	if err := checkArgv(argv); err != nil {
		return "", err
	}
	b, err := json.Marshal(argv)
	if err != nil {
		return "", fmt.Errorf("encode the argv: %w", err)
	}
	if len(b) > MaxArgvBytes {
		return "", fmt.Errorf("the argv is %d bytes as JSON, more than %d", len(b), MaxArgvBytes)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// DecodeArgv reads the header value: 1–MaxArgs strings of valid UTF-8
// without NUL, the first not empty, at most MaxArgvBytes of JSON. The
// error's text says what is wrong and never quotes an argument.
func DecodeArgv(v string) ([]string, error) {
	if v == "" {
		return nil, fmt.Errorf("the %s header is required: the command, as base64url of a JSON array of strings", ArgvHeader)
	}
	if base64.RawURLEncoding.DecodedLen(len(v)) > MaxArgvBytes {
		return nil, fmt.Errorf("the argv is more than %d bytes", MaxArgvBytes)
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(v, "="))
	if err != nil {
		return nil, fmt.Errorf("the %s header is not base64url", ArgvHeader)
	}
	var argv []string
	if !utf8.Valid(b) || json.Unmarshal(b, &argv) != nil {
		return nil, fmt.Errorf("the %s header is not a JSON array of strings", ArgvHeader)
	}
	return argv, checkArgv(argv)
}

func checkArgv(argv []string) error {
	switch {
	case len(argv) == 0:
		return errors.New("the command is empty")
	case len(argv) > MaxArgs:
		return fmt.Errorf("the command has %d arguments, more than %d", len(argv), MaxArgs)
	case argv[0] == "":
		return errors.New("the command's name is empty")
	}
	for i, a := range argv {
		if !utf8.ValidString(a) || strings.ContainsRune(a, 0) {
			return fmt.Errorf("argument %d is not valid UTF-8 without NUL", i)
		}
	}
	return nil
}

// Offered reports whether the request offers Subprotocol.
func Offered(r *http.Request) bool { return ptyshell.Offers(r, Subprotocol) }
