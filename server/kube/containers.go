package kube

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
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

// RemoveInstancePods deletes every pod of the app that instance made —
// sidecars, shells, execs, browse pods — and waits until they are gone, so
// that their claims are free; it returns the names it deleted. It is the
// dev stack's purge: pods of another instance sharing the app are kept.
func (r *Runtime) RemoveInstancePods(ctx context.Context, instance string) ([]string, error) {
	sel := labels.SelectorFromSet(labels.Set{LabelApp: r.cfg.AppName}).String()
	list, err := r.api.pods(r.cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, unavailable("list pods", err)
	}
	var removed []string
	for _, p := range list.Items {
		if p.Annotations[AnnotationInstance] != instance {
			continue
		}
		if err := r.removePod(ctx, p.Name, 0); err != nil {
			return removed, unavailable("delete a pod", err)
		}
		removed = append(removed, p.Name)
	}
	never := func(*corev1.Pod) (bool, error) { return false, nil }
	for _, name := range removed { // deleted all at once, then waited for
		if _, err := r.waitPod(ctx, name, never); !errors.Is(err, errPodGone) {
			return removed, unavailable("wait for a pod to go", err)
		}
	}
	return removed, nil
}
