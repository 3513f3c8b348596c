package rest

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

func TestUnknownReasonIs500AndLogged(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	a := New(nil, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	rec := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/v1/x", nil)
	status := a.writeError(rec, r, "id", &cairn.Error{Reason: "made_up", Detail: "?"})
	require.Equal(t, http.StatusInternalServerError, status)
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	require.Contains(t, logs.String(), "level=ERROR")
	require.Contains(t, logs.String(), "made_up")
}

func TestClientGoneIsNoError(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	a := New(nil, Config{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequest(http.MethodGet, "/v1/x", nil).WithContext(ctx)
	err := &cairn.Error{Reason: cairn.ReasonDockerUnavailable, Detail: "the docker engine did not answer in time",
		Err: errors.Join(errors.New("create the sidecar"), context.Canceled)}
	status := a.writeError(httptest.NewRecorder(), r, "id", err)
	require.Equal(t, 499, status)
	require.NotContains(t, logs.String(), "level=ERROR")
	require.Contains(t, logs.String(), "reason=client_gone")
}
