package rest

import (
	"bytes"
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

// declaredReasons reads every Reason constant from the domain's source, so
// a reason added there without a status here fails this test.
func declaredReasons(t *testing.T) []cairn.Reason {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../../error.go", nil, 0)
	require.NoError(t, err)
	var reasons []cairn.Reason
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || vs.Type == nil || types(vs.Type) != "Reason" {
			return true
		}
		for _, v := range vs.Values {
			lit, ok := v.(*ast.BasicLit)
			require.True(t, ok)
			s, err := strconv.Unquote(lit.Value)
			require.NoError(t, err)
			reasons = append(reasons, cairn.Reason(s))
		}
		return true
	})
	return reasons
}

func types(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

func TestEveryReasonHasAStatus(t *testing.T) {
	t.Parallel()
	reasons := declaredReasons(t)
	require.GreaterOrEqual(t, len(reasons), 45)
	for _, r := range reasons {
		_, known := statusOf(r)
		require.True(t, known, "reason %q has no status", r)
	}
	require.Len(t, statuses, len(reasons), "the table names only declared reasons")
	status, _ := statusOf(cairn.ReasonDatabaseUnavailable)
	require.Equal(t, http.StatusServiceUnavailable, status)
	status, _ = statusOf(cairn.ReasonInvalidPath)
	require.Equal(t, http.StatusBadRequest, status)
}

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
