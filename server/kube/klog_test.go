package kube

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/klog/v2"
)

// TestClientGoLogsToTheServerLog: what client-go logs through klog lands
// in the runtime's logger, as a JSON line with its component.
func TestClientGoLogsToTheServerLog(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600))
	var buf bytes.Buffer
	_, err := connect(Config{Kubeconfig: kubeconfig, Namespace: "cairn", AppName: "cairnt",
		Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	require.NoError(t, err)
	klog.ErrorS(nil, "watch ended", "resource", "pods")
	klog.Flush()
	require.Contains(t, buf.String(), `"msg":"watch ended"`)
	require.Contains(t, buf.String(), `"component":"client-go"`)
}
