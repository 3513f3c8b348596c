package ptyshell_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/ptyshell"
)

func TestFrameRoundTrip(t *testing.T) {
	t.Parallel()
	payloads := map[string][]byte{
		"empty":          {},
		"ascii":          []byte("echo hi\r"),
		"half a rune":    []byte("caf\xc3"), // a read may end inside a UTF-8 sequence
		"not UTF-8":      {0xff, 0xfe, 0x00, 0x1b, '[', 'A'},
		"control bytes":  {0x03, 0x04, 0x1a, 0x1c, 0x1d},
		"largest output": bytes.Repeat([]byte{0xa5}, ptyshell.MaxDataPayload),
	}
	for name, p := range payloads {
		for _, typ := range []ptyshell.FrameType{ptyshell.FrameInput, ptyshell.FrameResize, ptyshell.FrameExit, ptyshell.FrameNotice, 0x7f} {
			msg := ptyshell.Frame{Type: typ, Payload: p}.Encode()
			require.Len(t, msg, 1+len(p), name)
			f, err := ptyshell.DecodeFrame(msg)
			require.NoError(t, err, name)
			require.Equal(t, typ, f.Type, name)
			require.True(t, bytes.Equal(p, f.Payload), name)
		}
	}
}

func TestDecodeFrameEmpty(t *testing.T) {
	t.Parallel()
	_, err := ptyshell.DecodeFrame(nil)
	require.ErrorIs(t, err, ptyshell.ErrEmptyFrame)
	_, err = ptyshell.DecodeFrame([]byte{})
	require.ErrorIs(t, err, ptyshell.ErrEmptyFrame)
}

func TestParseResize(t *testing.T) {
	t.Parallel()
	ok := map[string]ptyshell.Size{
		`{"cols":120,"rows":40}`:                  {Cols: 120, Rows: 40},
		` {"rows":1, "cols":1000} `:               {Cols: 1000, Rows: 1},
		`{"cols":80,"rows":24,"pixels":[1,2]}`:    {Cols: 80, Rows: 24}, // unknown fields are ignored
		`{"cols":-5,"rows":5000}`:                 {Cols: -5, Rows: 5000},
		`{"cols":0,"rows":0,"note":"ünïcödé ok"}`: {},
	}
	for in, want := range ok {
		got, err := ptyshell.ParseResize([]byte(in))
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	bad := []string{
		``, `null`, `[]`, `"cols"`, `42`,
		`{"cols":80}`, `{"rows":24}`, `{}`,
		`{"cols":"80","rows":24}`, `{"cols":80.5,"rows":24}`, `{"cols":1e3,"rows":24}`,
		`{"cols":99999999999999999999,"rows":1}`,
		`{"cols":80,"rows":24} trailing`, `{"cols":80,"rows":24}{}`, `{"cols":80,`,
		"{\"cols\":80,\"rows\":24,\"x\":\"\xff\"}",
		`{"cols":80,"rows":24,"pad":"` + strings.Repeat("x", ptyshell.MaxControlPayload) + `"}`,
	}
	for _, in := range bad {
		_, err := ptyshell.ParseResize([]byte(in))
		require.Error(t, err, "%q", in)
	}
}

func TestSizeClamp(t *testing.T) {
	t.Parallel()
	require.Equal(t, ptyshell.Size{Cols: 1, Rows: 1000}, ptyshell.Size{Cols: 0, Rows: 5000}.Clamp())
	require.Equal(t, ptyshell.Size{Cols: 1, Rows: 1}, ptyshell.Size{Cols: -3, Rows: -9}.Clamp())
	require.Equal(t, ptyshell.Size{Cols: 120, Rows: 40}, ptyshell.Size{Cols: 120, Rows: 40}.Clamp())
	require.True(t, ptyshell.Size{Cols: 1, Rows: 1000}.Valid())
	require.False(t, ptyshell.Size{Cols: 1001, Rows: 10}.Valid())
}

func TestControlRoundTrip(t *testing.T) {
	t.Parallel()
	cases := []struct {
		typ      ptyshell.FrameType
		in, into any
	}{
		{ptyshell.FrameStatus, &ptyshell.Status{State: "running", ShellID: "01J", Container: "cairn.shell.w.01J", WorkspaceID: "w",
			WorkspaceName: "ws-alpha", IdleTimeoutSecs: 1800, MaxLifetimeSecs: 28800, Features: []string{}}, &ptyshell.Status{}},
		{ptyshell.FrameExit, &ptyshell.Exit{ExitCode: 42, Reason: ptyshell.ReasonExited, Message: "the shell exited with status 42"}, &ptyshell.Exit{}},
		{ptyshell.FrameError, &ptyshell.ErrorInfo{Code: ptyshell.ErrorResizeFailed, Message: "no", Fatal: false}, &ptyshell.ErrorInfo{}},
		{ptyshell.FrameNotice, &ptyshell.Notice{Code: ptyshell.NoticeIdleWarning, SecondsLeft: 60}, &ptyshell.Notice{}},
		{ptyshell.FrameResize, &ptyshell.Size{Cols: 100, Rows: 30}, &ptyshell.Size{}},
	}
	for _, c := range cases {
		msg, err := ptyshell.EncodeControl(c.typ, c.in)
		require.NoError(t, err)
		f, err := ptyshell.DecodeFrame(msg)
		require.NoError(t, err)
		require.Equal(t, c.typ, f.Type)
		require.NoError(t, ptyshell.DecodeControl(f.Payload, c.into))
		require.Equal(t, c.in, c.into)
	}
}

func TestControlWireNames(t *testing.T) {
	t.Parallel()
	msg, err := ptyshell.EncodeControl(ptyshell.FrameExit, ptyshell.Exit{ExitCode: 3, Reason: ptyshell.ReasonIdleTimeout, Message: "m"})
	require.NoError(t, err)
	require.JSONEq(t, `{"exit_code":3,"reason":"idle_timeout","message":"m"}`, string(msg[1:]))
	msg, err = ptyshell.EncodeControl(ptyshell.FrameStatus, ptyshell.Status{State: "starting", Features: []string{}})
	require.NoError(t, err)
	var fields map[string]any
	require.NoError(t, json.Unmarshal(msg[1:], &fields))
	for _, k := range []string{"state", "shell_id", "container", "workspace_id", "workspace_name", "idle_timeout_s", "max_lifetime_s", "features"} {
		require.Contains(t, fields, k)
	}
}

func TestEncodeControlTooLarge(t *testing.T) {
	t.Parallel()
	_, err := ptyshell.EncodeControl(ptyshell.FrameExit, ptyshell.Exit{Message: strings.Repeat("x", ptyshell.MaxControlPayload)})
	require.Error(t, err)
}

func TestReasonCloseCodes(t *testing.T) {
	t.Parallel()
	want := map[ptyshell.Reason]int{
		ptyshell.ReasonExited: 1000, ptyshell.ReasonOOMKilled: 1000, ptyshell.ReasonIdleTimeout: 4000,
		ptyshell.ReasonMaxLifetime: 4001, ptyshell.ReasonTerminated: 4002, ptyshell.ReasonServerShutdown: 1001,
		ptyshell.ReasonProtocolError: 1008, ptyshell.ReasonError: 1011,
	}
	for r, code := range want {
		require.Equal(t, code, r.CloseCode(), r)
	}
}

// FuzzDecodeFrame feeds arbitrary messages to the decoder and the control
// parsers the server and client apply to them: nothing panics, a decoded
// frame re-encodes to the same message, and a parsed RESIZE re-encodes to
// the same size.
func FuzzDecodeFrame(f *testing.F) {
	seeds := [][]byte{
		nil, {0x00}, {0x00, 'h', 'i'}, {0x01}, {0x7f, 0xff},
		append([]byte{0x01}, `{"cols":120,"rows":40}`...),
		append([]byte{0x01}, `{"cols":-1,"rows":1e9}`...),
		append([]byte{0x01}, `{"cols":80,"rows":24}junk`...),
		append([]byte{0x01}, `[1,2]`...),
		append([]byte{0x01}, "{\"cols\":1,\"rows\":1,\"s\":\"\xc3\"}"...),
		append([]byte{0x02}, `{"exit_code":3,"reason":"exited","message":"bye"}`...),
		append([]byte{0x02}, `{"signal":"INT"}`...),
		append([]byte{0x03}, `{"code":"resize_failed","message":"x","fatal":false}`...),
		append([]byte{0x04}, `{"code":"idle_warning","seconds_left":60}`...),
		append([]byte{0x01}, `{"state":"running","features":["signal"]}`...),
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		fr, err := ptyshell.DecodeFrame(msg)
		if err != nil {
			require.Empty(t, msg)
			return
		}
		require.Equal(t, msg, fr.Encode())
		if size, err := ptyshell.ParseResize(fr.Payload); err == nil {
			again, err := ptyshell.EncodeControl(ptyshell.FrameResize, size)
			require.NoError(t, err)
			back, err := ptyshell.ParseResize(again[1:])
			require.NoError(t, err)
			require.Equal(t, size, back)
			require.True(t, size.Clamp().Valid())
		}
		for _, v := range []any{&ptyshell.Status{}, &ptyshell.Exit{}, &ptyshell.ErrorInfo{}, &ptyshell.Notice{}} {
			_ = ptyshell.DecodeControl(fr.Payload, v) // must not panic; errors are expected
		}
	})
}
