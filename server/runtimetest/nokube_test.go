//go:build !kube

package runtimetest_test

// clusterDown has nothing to take down without the kube build tag.
func clusterDown() {}
