package cairn

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// declaredReasons reads every Reason constant from the package's source, so
// a reason added without a status fails TestEveryReasonHasAStatus.
func declaredReasons(t *testing.T) []Reason {
	t.Helper()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var reasons []Reason
	for _, name := range files {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok || !isIdent(vs.Type, "Reason") {
				return true
			}
			for _, v := range vs.Values {
				lit, ok := v.(*ast.BasicLit)
				require.True(t, ok, "%s: a Reason is a string literal", name)
				s, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				reasons = append(reasons, Reason(s))
			}
			return true
		})
	}
	return reasons
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func TestEveryReasonHasAStatus(t *testing.T) {
	t.Parallel()
	reasons := declaredReasons(t)
	require.GreaterOrEqual(t, len(reasons), 60)
	for _, r := range reasons {
		_, known := r.HTTPStatus()
		require.True(t, known, "reason %q has no status", r)
	}
	require.Len(t, Reasons(), len(reasons), "the table names only declared reasons")
	status, _ := ReasonDatabaseUnavailable.HTTPStatus()
	require.Equal(t, http.StatusServiceUnavailable, status)
	status, _ = ReasonInvalidPath.HTTPStatus()
	require.Equal(t, http.StatusBadRequest, status)
	status, known := Reason("made_up").HTTPStatus()
	require.False(t, known)
	require.Equal(t, http.StatusInternalServerError, status)
}

func TestVolumeRouteStatus(t *testing.T) {
	t.Parallel()
	status, own := ReasonVolumeNotReady.VolumeRouteStatus()
	require.Equal(t, http.StatusConflict, status)
	require.True(t, own)
	table, _ := ReasonVolumeNotReady.HTTPStatus()
	require.Equal(t, http.StatusBadRequest, table, "the transfer routes keep the table's")
	status, own = ReasonPathNotFound.VolumeRouteStatus()
	require.Equal(t, http.StatusNotFound, status)
	require.False(t, own)
}
