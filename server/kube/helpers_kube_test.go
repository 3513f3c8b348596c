//go:build kube

package kube_test

import (
	"os"
	"path/filepath"
	"testing"
)

// requireOrSkip skips a test that cannot run here, or fails it under
// CI=true, where nothing may skip.
func requireOrSkip(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// kubectl is the kubectl the cluster scripts build into the cache.
func kubectl(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if d := os.Getenv("CAIRN_K8S_CACHE"); d != "" {
		return filepath.Join(d, "bin", "kubectl")
	}
	return filepath.Join(cache, "cairn", "k8s", "v1.37.2", "bin", "kubectl")
}
