package apiclient_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGeneratedClientIsCurrent runs the generator as go:generate does (into
// stdout instead of the file) and fails when the committed file differs:
// the document changed and nobody ran go generate.
func TestGeneratedClientIsCurrent(t *testing.T) {
	t.Parallel()
	cmd := exec.CommandContext(t.Context(), "go", "tool", "oapi-codegen", "-config", "oapi-codegen.yaml", "../../docs/openapi.yaml")
	fresh, err := cmd.Output()
	if exit, ok := errors.AsType[*exec.ExitError](err); ok {
		t.Fatalf("oapi-codegen: %v: %s", err, exit.Stderr)
	}
	require.NoError(t, err)
	committed, err := os.ReadFile("apiclient.gen.go")
	require.NoError(t, err)
	if !bytes.Equal(fresh, committed) {
		t.Fatal("apiclient.gen.go is stale: run `go generate ./internal/apiclient` and commit the result")
	}
}
