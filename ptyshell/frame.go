package ptyshell

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Subprotocol is the websocket subprotocol of v1. A client offers it in
// Sec-WebSocket-Protocol and the server's 101 must name it.
const Subprotocol = "cairn.ptyshell.v1"

// Size limits of payloads and messages.
const (
	// MaxDataPayload bounds an INPUT or OUTPUT payload.
	MaxDataPayload = 32 << 10
	// MaxControlPayload bounds a control payload (the JSON object).
	MaxControlPayload = 4 << 10
	// ServerReadLimit is the largest message the server reads; above it
	// gorilla closes with 1009.
	ServerReadLimit = 64 << 10
	// ClientReadLimit is the largest message the client reads.
	ClientReadLimit = 1 << 20
)

// FrameType is the first byte of every message. Values overlap between the
// two directions: 0x00 is INPUT from the client and OUTPUT from the server.
type FrameType byte

// Client → server frames.
const (
	FrameInput  FrameType = 0x00
	FrameResize FrameType = 0x01
	// FrameSignal is reserved: a v1 server ignores it.
	FrameSignal FrameType = 0x02
)

// Server → client frames.
const (
	FrameOutput FrameType = 0x00
	FrameStatus FrameType = 0x01
	FrameExit   FrameType = 0x02
	FrameError  FrameType = 0x03
	FrameNotice FrameType = 0x04
)

// ErrEmptyFrame is what DecodeFrame returns for a zero-length message, which
// carries nothing and is ignored by both ends.
var ErrEmptyFrame = errors.New("ptyshell: empty frame")

// Frame is one message: a type byte and its payload.
type Frame struct {
	Type    FrameType
	Payload []byte
}

// DecodeFrame splits a binary message into its type and payload. The payload
// aliases msg. It fails only for a zero-length message (ErrEmptyFrame); the
// payload is checked by the parser of its type.
func DecodeFrame(msg []byte) (Frame, error) {
	if len(msg) == 0 {
		return Frame{}, ErrEmptyFrame
	}
	return Frame{Type: FrameType(msg[0]), Payload: msg[1:]}, nil
}

// Encode returns the message for f: the type byte followed by the payload.
func (f Frame) Encode() []byte {
	msg := make([]byte, 1+len(f.Payload))
	msg[0] = byte(f.Type)
	copy(msg[1:], f.Payload)
	return msg
}

// EncodeControl returns the message of a control frame whose payload is v
// as JSON. It fails when v does not marshal or exceeds MaxControlPayload.
func EncodeControl(t FrameType, v any) ([]byte, error) {
	p, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode control frame 0x%02x: %w", byte(t), err)
	}
	if len(p) > MaxControlPayload {
		return nil, fmt.Errorf("encode control frame 0x%02x: payload of %d bytes exceeds %d", byte(t), len(p), MaxControlPayload)
	}
	return Frame{Type: t, Payload: p}.Encode(), nil
}

// DecodeControl parses a control payload into v: one UTF-8 JSON object of at
// most MaxControlPayload bytes, nothing after it. Unknown fields are
// ignored.
func DecodeControl(payload []byte, v any) error {
	switch {
	case len(payload) > MaxControlPayload:
		return fmt.Errorf("control payload of %d bytes exceeds %d", len(payload), MaxControlPayload)
	case !utf8.Valid(payload):
		return errors.New("control payload is not UTF-8")
	case !bytes.HasPrefix(bytes.TrimLeft(payload, " \t\r\n"), []byte("{")):
		return errors.New("control payload is not a JSON object")
	}
	if err := json.Unmarshal(payload, v); err != nil {
		return fmt.Errorf("control payload: %w", err)
	}
	return nil
}

// Size is a terminal size in character cells: the RESIZE payload and the
// size of the handshake.
type Size struct {
	Cols int `json:"cols"`
	Rows int `json:"rows"`
}

// Bounds of a terminal dimension, in the handshake and in RESIZE.
const (
	MinDimension = 1
	MaxDimension = 1000
)

// Clamp returns s with both dimensions clamped to 1–1000.
func (s Size) Clamp() Size {
	return Size{Cols: clamp(s.Cols), Rows: clamp(s.Rows)}
}

// Valid reports whether both dimensions are within 1–1000, as the handshake
// requires.
func (s Size) Valid() bool { return s == s.Clamp() }

func clamp(n int) int { return min(max(n, MinDimension), MaxDimension) }

// ParseResize parses a RESIZE payload. Both fields must be present and
// integers; the values are returned as sent, unclamped.
func ParseResize(payload []byte) (Size, error) {
	var raw struct {
		Cols *int `json:"cols"`
		Rows *int `json:"rows"`
	}
	if err := DecodeControl(payload, &raw); err != nil {
		return Size{}, fmt.Errorf("resize: %w", err)
	}
	if raw.Cols == nil || raw.Rows == nil {
		return Size{}, errors.New("resize: cols and rows are required")
	}
	return Size{Cols: *raw.Cols, Rows: *raw.Rows}, nil
}

// States of a STATUS frame.
const (
	StateStarting = "starting"
	StateRunning  = "running"
)

// Status is the STATUS payload: the session's identity and limits. The
// server sends it as "starting" after the upgrade and "running" once the
// shell has started; both carry the same fields.
type Status struct {
	State           string   `json:"state"`
	ShellID         string   `json:"shell_id"`
	Container       string   `json:"container"`
	WorkspaceID     string   `json:"workspace_id"`
	WorkspaceName   string   `json:"workspace_name"`
	IdleTimeoutSecs int      `json:"idle_timeout_s"`
	MaxLifetimeSecs int      `json:"max_lifetime_s"`
	Features        []string `json:"features"`
	// Role is v2's: "writer" or "watcher"; absent in v1.
	Role string `json:"role,omitempty"`
}

// Exit is the EXIT payload, sent exactly once, after all OUTPUT.
type Exit struct {
	ExitCode int    `json:"exit_code"`
	Reason   Reason `json:"reason"`
	// Message is one human sentence; clients show it and never parse it.
	Message string `json:"message"`
}

// v1's ERROR codes. Only ErrorResizeFailed is not fatal; v2 adds
// ErrorReadOnly, which is not fatal either.
const (
	ErrorResizeFailed     = "resize_failed"
	ErrorRuntime          = "runtime_error"
	ErrorOpenTimeout      = "open_timeout"
	ErrorAuditUnavailable = "audit_unavailable"
)

// ErrorInfo is the ERROR payload. A fatal one is followed by EXIT with
// reason "error".
type ErrorInfo struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Fatal   bool   `json:"fatal"`
}

// NOTICE codes.
const (
	NoticeIdleWarning     = "idle_warning"
	NoticeLifetimeWarning = "lifetime_warning"
)

// Notice is the NOTICE payload: an advance warning, never mixed into
// OUTPUT.
type Notice struct {
	Code        string `json:"code"`
	SecondsLeft int    `json:"seconds_left"`
}
