package kube

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/sidecar"
)

// A workspace volume is a PersistentVolumeClaim named like the Docker
// volume (lower-cased), labelled with the app and workspace, its cairn
// name in an annotation.

// VolumeExists reports whether the volume's claim exists and is not being
// deleted.
func (r *Runtime) VolumeExists(ctx context.Context, name string) (bool, error) {
	claim, err := objectName(name)
	if err != nil {
		return false, err
	}
	pvc, err := r.api.claims(r.cfg.Namespace).Get(ctx, claim, getOpts)
	switch {
	case err == nil:
		return pvc.DeletionTimestamp == nil, nil
	case apierrors.IsNotFound(err):
		return false, nil
	default:
		return false, unavailable("read the volume claim", err)
	}
}

// CreateVolume creates the volume's claim and, when its class binds at
// once, waits until it is bound, so the pods that mount it are scheduled
// at once (an unbound claim costs a pod seconds of scheduler backoff). An
// existing claim is waited for too: like Docker's, the create is
// idempotent. A class that binds on first use — node-local volumes, whose
// node is the first pod's — is not waited for, nor one this server may not
// read (the scheduler waits for the claim instead). The claim asks for sizeBytes, or VolumeSize
// when it is 0; the service keeps sizes within MaxVolumeBytes.
func (r *Runtime) CreateVolume(ctx context.Context, name string, labels map[string]string, sizeBytes int64) error {
	claim, err := objectName(name)
	if err != nil {
		return err
	}
	pvc := r.claimFor(claim, name, labels, sizeBytes)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	_, err = r.api.claims(r.cfg.Namespace).Create(cctx, pvc, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		err = r.replaceLeaving(cctx, pvc)
	}
	if err != nil {
		return unavailable("create the volume claim", err)
	}
	if !r.bindsAtOnce(ctx) {
		return nil
	}
	return r.waitBound(ctx, claim)
}

// claimFor is the claim of the named volume, asking for sizeBytes of
// storage, or VolumeSize when it is 0.
func (r *Runtime) claimFor(claim, name string, labels map[string]string, sizeBytes int64) *corev1.PersistentVolumeClaim {
	own := map[string]string{}
	for k, v := range labels {
		own[k] = v
	}
	size := r.cfg.VolumeSize
	if sizeBytes > 0 {
		size = *resource.NewQuantity(sizeBytes, resource.BinarySI)
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: r.meta(claim, own, map[string]string{AnnotationVolume: name}),
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{r.cfg.AccessMode},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}
	if r.cfg.StorageClass != "" {
		pvc.Spec.StorageClassName = &r.cfg.StorageClass
	}
	return pvc
}

// VolumeSize is the capacity the volume's claim was granted, 0 while it
// is not bound or when it is absent.
func (r *Runtime) VolumeSize(ctx context.Context, name string) (int64, error) {
	claim, err := objectName(name)
	if err != nil {
		return 0, err
	}
	pvc, err := r.api.claims(r.cfg.Namespace).Get(ctx, claim, getOpts)
	switch {
	case apierrors.IsNotFound(err):
		return 0, nil
	case err != nil:
		return 0, unavailable("read the volume claim", err)
	}
	size := pvc.Status.Capacity[corev1.ResourceStorage]
	return size.Value(), nil
}

// MaxVolumeBytes is the largest size a workspace may ask its claim for.
func (r *Runtime) MaxVolumeBytes() int64 { return r.cfg.MaxVolumeSize.Value() }

// replaceLeaving handles a claim of that name that already exists: a live
// one is the volume (the create is idempotent); one being deleted — by
// someone behind cairn's back, the claim protection holding it a moment —
// is waited out and made anew, since a pod that mounts a claim being
// deleted is never scheduled.
func (r *Runtime) replaceLeaving(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error {
	claims := r.api.claims(r.cfg.Namespace)
	old, err := claims.Get(ctx, pvc.Name, getOpts)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return err
	case old.DeletionTimestamp == nil:
		return nil
	default:
		if err := r.waitClaim(ctx, pvc.Name, func(_ *corev1.PersistentVolumeClaim, deleted bool) bool { return deleted }); err != nil {
			return fmt.Errorf("wait for the claim being deleted to go: %w", err)
		}
	}
	_, err = claims.Create(ctx, pvc, metav1.CreateOptions{})
	return err
}

// bindsAtOnce reports whether the claims' class is known to bind a claim
// when it is made, not when a pod first uses it.
func (r *Runtime) bindsAtOnce(ctx context.Context) bool {
	sc, err := r.storageClass(ctx)
	return err == nil && sc != nil &&
		(sc.VolumeBindingMode == nil || *sc.VolumeBindingMode == storagev1.VolumeBindingImmediate)
}

// storageClass is the claims' class: kubernetes.storageClass, else the
// cluster's default; nil with no error when the cluster has no default.
func (r *Runtime) storageClass(ctx context.Context) (*storagev1.StorageClass, error) {
	classes := r.api.classes()
	if r.cfg.StorageClass != "" {
		return classes.Get(ctx, r.cfg.StorageClass, getOpts)
	}
	list, err := classes.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var sc *storagev1.StorageClass
	for i := range list.Items {
		if list.Items[i].Annotations["storageclass.kubernetes.io/is-default-class"] == "true" {
			sc = &list.Items[i]
		}
	}
	return sc, nil
}

// hostPathProvisioner makes hostPath volumes that name no node: on a
// cluster of several nodes each pod would find the data of its own node.
const hostPathProvisioner = "kubernetes.io/host-path"

// CheckStorage refuses, at start, claims that could never be bound — a
// kubernetes.storageClass the cluster does not have, or none named and no
// default class — and, on a cluster of several nodes, a class of hostPath
// volumes, whose pods could land where their data is not. Without the
// optional grant to read storage classes and nodes (cluster-reader.yaml)
// it checks nothing.
func (r *Runtime) CheckStorage(ctx context.Context) error {
	sc, err := r.storageClass(ctx)
	switch {
	case apierrors.IsForbidden(err):
		return nil
	case apierrors.IsNotFound(err):
		return fmt.Errorf("kubernetes.storageClass: the cluster has no storage class %q (kubectl get storageclass lists them)", r.cfg.StorageClass)
	case err != nil:
		return unavailable("read the storage classes", err)
	case sc == nil:
		return errors.New("kubernetes.storageClass: none is named and the cluster has no default storage class; name one")
	case sc.Provisioner != hostPathProvisioner:
		return nil
	}
	nodes, err := r.api.nodes().List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsForbidden(err):
		return nil
	case err != nil:
		return unavailable("list the nodes", err)
	case len(nodes.Items) > 1:
		return fmt.Errorf("kubernetes.storageClass: class %q makes hostPath volumes, which name no node; on this cluster of %d nodes a workspace's pods could run where its files are not. Name a class whose volumes carry node affinity (a local-volume provisioner) or network storage",
			sc.Name, len(nodes.Items))
	}
	return nil
}

// waitBound waits, within the pod start timeout, for the claim to be bound.
func (r *Runtime) waitBound(ctx context.Context, claim string) error {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.PodStartTimeout)
	defer cancel()
	err := r.waitClaim(ctx, claim, func(pvc *corev1.PersistentVolumeClaim, deleted bool) bool {
		return deleted || pvc.Status.Phase == corev1.ClaimBound
	})
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		return &cairn.Error{Reason: cairn.ReasonDockerUnavailable, Err: err,
			Detail: fmt.Sprintf("the volume claim '%s' was not bound within %s; does its storage class provision volumes?", claim, r.cfg.PodStartTimeout)}
	}
	if err != nil {
		return unavailable("wait for the volume claim to be bound", err)
	}
	return nil
}

// waitClaim watches one claim until done says so; deleted tells done the
// claim is gone.
func (r *Runtime) waitClaim(ctx context.Context, claim string, done func(pvc *corev1.PersistentVolumeClaim, deleted bool) bool) error {
	claims := r.api.claims(r.cfg.Namespace)
	sel := fields.OneTermEqualSelector("metadata.name", claim).String()
	for {
		list, err := claims.List(ctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil {
			return err
		}
		if len(list.Items) == 0 {
			if done(nil, true) {
				return nil
			}
		} else if done(&list.Items[0], false) {
			return nil
		}
		w, err := claims.Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: list.ResourceVersion})
		if err != nil {
			return err
		}
		if ended, err := watchClaim(ctx, w, done); ended || err != nil {
			return err
		}
	}
}

// watchClaim drains one watch until done says so (ended) or the API ends
// the watch (neither ended nor an error: list again).
func watchClaim(ctx context.Context, w watch.Interface, done func(*corev1.PersistentVolumeClaim, bool) bool) (ended bool, err error) {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case ev, open := <-w.ResultChan():
			if !open || ev.Type == watch.Error {
				return false, nil
			}
			pvc, ok := ev.Object.(*corev1.PersistentVolumeClaim)
			if ok && done(pvc, ev.Type == watch.Deleted) {
				return true, nil
			}
		}
	}
}

// RemoveVolume deletes the volume's claim unless a pod uses it, and waits
// until it is gone. Kubernetes defers the deletion of a claim in use
// instead of refusing it, so the in-use gate is a check of the pods that
// mount it (running or about to); a pod made between the check and the
// delete keeps the claim until it ends. Pods already being deleted are
// waited for (awaitClaimFree). An absent claim is not an error.
// Reasons: volume_in_use, docker_unavailable.
func (r *Runtime) RemoveVolume(ctx context.Context, name string) error {
	claim, err := objectName(name)
	if err != nil {
		return err
	}
	if err := r.awaitClaimFree(ctx, claim); err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	err = r.api.claims(r.cfg.Namespace).Delete(cctx, claim, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return unavailable("delete the volume claim", err)
	}
	if err := r.waitClaim(cctx, claim, func(_ *corev1.PersistentVolumeClaim, deleted bool) bool { return deleted }); err != nil {
		return unavailable("wait for the volume claim to go", err)
	}
	return nil
}

// MountCounts counts, for each named volume, the running pods that mount
// its claim, in one list call. This app's browse pods are not counted,
// as on Docker.
func (r *Runtime) MountCounts(ctx context.Context, names []string) (map[string]int, error) {
	claims := make([]string, 0, len(names))
	byClaim := make(map[string]string, len(names))
	for _, n := range names {
		claim, err := objectName(n)
		if err != nil {
			return nil, err
		}
		claims = append(claims, claim)
		byClaim[claim] = n
	}
	users, err := r.claimUsers(ctx, claims, true)
	if err != nil {
		return nil, err
	}
	counts := make(map[string]int, len(names))
	for claim, n := range byClaim {
		counts[n] = len(users[claim])
	}
	return counts, nil
}

// awaitClaimFree returns once no pod mounts the claim, or refuses with
// volume_in_use. A pod already being deleted starts nothing new: it is a
// shell, exec or sidecar that ended, whose pod goes within its grace (an
// idle hold process ignores SIGTERM, so a shell pod takes its whole stop
// grace). "cairn exec ws -- cmd && cairn ws teardown ws" must not fail on
// it, so such pods are waited for, within cleanupTimeout.
func (r *Runtime) awaitClaimFree(ctx context.Context, claim string) error {
	users, err := r.claimUsers(ctx, []string{claim}, false)
	if err != nil {
		return err
	}
	inUse := func(n int) error {
		return cairn.Errorf(cairn.ReasonVolumeInUse, "volume claim '%s' is mounted by %d pod(s) and can't be deleted", claim, n)
	}
	var leaving []string
	for _, pod := range users[claim] {
		if pod.DeletionTimestamp == nil {
			return inUse(len(users[claim]))
		}
		leaving = append(leaving, pod.Name)
	}
	wctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
	defer cancel()
	never := func(*corev1.Pod) (bool, error) { return false, nil }
	for i, name := range leaving {
		if _, err := r.waitPod(wctx, name, never); !errors.Is(err, errPodGone) {
			if ctx.Err() != nil {
				return unavailable("wait for the pods leaving the volume claim", ctx.Err())
			}
			return inUse(len(leaving) - i)
		}
	}
	return nil
}

// claimUsers lists the pods mounting each claim: running ones only, or
// every pod not yet ended (the teardown's gate: a pending pod is about to
// mount it).
func (r *Runtime) claimUsers(ctx context.Context, claims []string, runningOnly bool) (map[string][]*corev1.Pod, error) {
	opts := metav1.ListOptions{}
	if runningOnly {
		opts.FieldSelector = fields.OneTermEqualSelector("status.phase", string(corev1.PodRunning)).String()
	}
	list, err := r.api.pods(r.cfg.Namespace).List(ctx, opts)
	if err != nil {
		return nil, unavailable("list pods", err)
	}
	users := make(map[string][]*corev1.Pod, len(claims))
	for _, c := range claims {
		users[c] = nil
	}
	for i := range list.Items {
		pod := &list.Items[i]
		if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed || r.isBrowser(pod) {
			continue
		}
		seen := map[string]bool{}
		for _, v := range pod.Spec.Volumes {
			pvc := v.PersistentVolumeClaim
			if pvc == nil || seen[pvc.ClaimName] {
				continue
			}
			if _, ok := users[pvc.ClaimName]; ok {
				seen[pvc.ClaimName] = true
				users[pvc.ClaimName] = append(users[pvc.ClaimName], pod)
			}
		}
	}
	return users, nil
}

func (r *Runtime) isBrowser(pod *corev1.Pod) bool {
	return pod.Labels[LabelApp] == r.cfg.AppName && pod.Labels[LabelCommand] == sidecar.CommandServe
}

// ListVolumes returns the cairn names of this app's volumes that start
// with prefix.
func (r *Runtime) ListVolumes(ctx context.Context, prefix string) ([]string, error) {
	sel := labels.SelectorFromSet(labels.Set{LabelApp: r.cfg.AppName}).String()
	list, err := r.api.claims(r.cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, unavailable("list volume claims", err)
	}
	var names []string
	for _, pvc := range list.Items {
		if n := pvc.Annotations[AnnotationVolume]; len(n) >= len(prefix) && n[:len(prefix)] == prefix && pvc.DeletionTimestamp == nil {
			names = append(names, n)
		}
	}
	return names, nil
}
