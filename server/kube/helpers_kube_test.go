//go:build kube

package kube_test

import (
	"errors"
	"testing"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// requireOrSkip skips a test that cannot run here, or fails it under
// CI=true, where nothing may skip.
func requireOrSkip(t *testing.T, why string) {
	t.Helper()
	stacktest.Need(t, "what this test needs", errors.New(why))
}

// kubectl is the cluster's kubectl (stacktest.Kubectl).
func kubectl(t *testing.T) string {
	t.Helper()
	k, err := stacktest.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	return k
}
