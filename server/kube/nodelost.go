package kube

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cairn-dev/cairn/server/service"
)

// A node that stops reporting — its kubelet gone with a power cut, a crash
// or a lost network — leaves its pods Running in the API until the cluster
// evicts them, minutes later, while the sessions in them cannot be reached
// at all. So a session pod whose node has been gone, or not Ready for
// NodeLostGrace, is listed as lost (service.ShellNodeLost): the registry
// ends its session with reason node_lost and deletes the pod, and the
// node's kubelet removes what is left of it if the node comes back.

// lostNodes reports which nodes count as lost now. Without the optional
// grant to list nodes (cluster-reader.yaml) no node does: the warning is
// placement's, given once.
func (c *cluster) lostNodes(ctx context.Context) (func(name string) bool, error) {
	list, err := c.api.nodes().List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsForbidden(err):
		c.placement.warnOnce(c.log, err)
		return func(string) bool { return false }, nil
	case err != nil:
		return nil, unavailable("list the nodes", err)
	}
	present := make(map[string]*corev1.Node, len(list.Items))
	for i := range list.Items {
		present[list.Items[i].Name] = &list.Items[i]
	}
	now := time.Now()
	return func(name string) bool {
		node, ok := present[name]
		return !ok || notReadySince(node, now) > c.cfg.NodeLostGrace
	}, nil
}

// notReadySince is how long node has not been Ready, 0 while it is.
func notReadySince(node *corev1.Node, now time.Time) time.Duration {
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			if cond.Status == corev1.ConditionTrue {
				return 0
			}
			return now.Sub(cond.LastTransitionTime.Time)
		}
	}
	return 0 // a node that never reported is the scheduler's to keep pods from
}

// markLost lists the session pods that run on a lost node as such.
func markLost(pods []corev1.Pod, out []service.ShellContainer, lost func(string) bool) {
	for i := range pods {
		node := pods[i].Spec.NodeName
		if node != "" && (out[i].State == "running" || out[i].State == "created") && lost(node) {
			out[i].State = service.ShellNodeLost
		}
	}
}
