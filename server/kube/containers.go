package kube

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/cairn-dev/cairn/server/reconcile"
)

var _ reconcile.Containers = (*Runtime)(nil)

// ListSidecars lists every pod, running or not, labelled as a sidecar of
// app. A pod's ID is its name.
func (r *Runtime) ListSidecars(ctx context.Context, app string) ([]reconcile.Container, error) {
	ctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
	defer cancel()
	sel := labels.SelectorFromSet(labels.Set{LabelApp: app, LabelRole: "sidecar"}).String()
	list, err := r.api.pods(r.cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, unavailable("list sidecar pods", err)
	}
	out := make([]reconcile.Container, len(list.Items))
	for i, p := range list.Items {
		out[i] = reconcile.Container{ID: p.Name, Created: p.CreationTimestamp.Time,
			Instance: p.Annotations[AnnotationInstance], WorkspaceID: p.Labels[LabelWorkspace]}
	}
	return out, nil
}

// RemoveContainer deletes a pod at once; an absent one is no error.
func (r *Runtime) RemoveContainer(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
	defer cancel()
	if err := r.removePod(ctx, id, 0); err != nil {
		return unavailable("delete a pod", err)
	}
	return nil
}
