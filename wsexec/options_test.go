package wsexec_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/wsexec"
)

func TestOptionsCodec(t *testing.T) {
	t.Parallel()
	o := wsexec.Options{Dir: "/mnt/cairn/ws/src", Env: map[string]string{"B": "2", "A": "x=y"}, TimeoutS: 90}
	v, err := wsexec.EncodeOptions(o)
	require.NoError(t, err)
	got, err := wsexec.DecodeOptions(v)
	require.NoError(t, err)
	require.Equal(t, o, got)
	require.Equal(t, []string{"A=x=y", "B=2"}, got.EnvList())

	v, err = wsexec.EncodeOptions(wsexec.Options{})
	require.NoError(t, err)
	require.Empty(t, v, "the defaults send no header")

	many := map[string]string{}
	for i := range wsexec.MaxEnvVars + 1 {
		many[strings.Repeat("V", i+1)] = ""
	}
	for name, bad := range map[string]wsexec.Options{
		"CairnName":   {Env: map[string]string{"CAIRN_WORKSPACE_ID": "x"}},
		"DigitFirst":  {Env: map[string]string{"1A": "x"}},
		"Equals":      {Env: map[string]string{"A=B": "x"}},
		"NUL":         {Env: map[string]string{"A": "x\x00y"}},
		"TooMany":     {Env: many},
		"NegativeTTL": {TimeoutS: -1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := wsexec.EncodeOptions(bad)
			require.Error(t, err)
		})
	}
	for name, raw := range map[string]string{"NotBase64": "!!", "NotJSON": "bm90IGpzb24", "Array": "WzFd"} {
		t.Run(name, func(t *testing.T) {
			_, err := wsexec.DecodeOptions(raw)
			require.Error(t, err)
		})
	}
}

func TestServeSignalsAndTimeout(t *testing.T) {
	t.Parallel()
	t.Run("SignalsReachTheCommand", func(t *testing.T) {
		t.Parallel()
		proc := newCat(0)
		proc.hold = true
		proc.signals = make(chan string, 4)
		url, results := serve(t, proc, wsexec.ServeOptions{})
		signals := make(chan string, 4)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			_, err := wsexec.Run(ctx, dial(t, url), nil, nil, nil, wsexec.RunOptions{Signals: signals})
			done <- err
		}()
		signals <- "INT"
		signals <- "SEGV" // not one cairn delivers: dropped by the client
		signals <- "TERM"
		require.Equal(t, "INT", <-proc.signals)
		require.Equal(t, "TERM", <-proc.signals)
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
		result(t, results)
		require.Empty(t, proc.signals)
	})
	t.Run("Timeout", func(t *testing.T) {
		t.Parallel()
		proc := newCat(0)
		proc.hold = true
		url, results := serve(t, proc, wsexec.ServeOptions{Timeout: 100 * time.Millisecond})
		st, code := statusOf(t, dial(t, url))
		require.Equal(t, wsexec.ReasonTimeout, st.Reason)
		require.Equal(t, 4005, code)
		require.Equal(t, int32(1), proc.stops.Load())
		require.Equal(t, wsexec.ReasonTimeout, result(t, results).Reason)
	})
}
