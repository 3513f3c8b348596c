// Command localpv is the local cluster's storage provisioner, run by
// scripts/k8s-up.sh beside the controller-manager. Its storage class binds
// on first use (WaitForFirstConsumer): once the scheduler has chosen a node
// for the first pod of a claim, localpv makes a directory for the claim on
// that node and a `local` PersistentVolume bound to it whose node affinity
// names that node, as a local disk's would — so on a cluster of several
// nodes every later pod of the claim can only go where its data is. When
// the claim is deleted, the released volume and its directory go too.
//
// The nodes of the local cluster share the host's disk: a node's
// directories live under ROOT/NODE, and only the volume's affinity makes
// them the node's own.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
)

const (
	// provisionerName is the storage class's provisioner field.
	provisionerName = "cairn.local/node-dir"
	// The annotations the control plane sets: the provisioner a claim
	// waits for (the PV controller), the node the scheduler chose for it,
	// and the provisioner that made a volume.
	annProvisioner  = "volume.kubernetes.io/storage-provisioner"
	annSelectedNode = "volume.kubernetes.io/selected-node"
	annProvisionBy  = "pv.kubernetes.io/provisioned-by"
	hostnameLabel   = "kubernetes.io/hostname"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the kubeconfig to act with")
	root := flag.String("root", "", "the directory under which each node's volumes are made")
	flag.Parse()
	if *kubeconfig == "" || !filepath.IsAbs(*root) {
		fmt.Fprintln(os.Stderr, "usage: localpv -kubeconfig FILE -root ABSOLUTE_DIR")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, *kubeconfig, *root); err != nil {
		slog.Error("localpv", "err", err)
		os.Exit(1)
	}
}

// provisioner reconciles claims (key "claim:NAMESPACE/NAME") and volumes
// (key "volume:NAME") queued by the informers.
type provisioner struct {
	api     kubernetes.Interface
	root    string
	claims  corelisters.PersistentVolumeClaimLister
	volumes corelisters.PersistentVolumeLister
	queue   workqueue.TypedRateLimitingInterface[string]
}

func run(ctx context.Context, kubeconfig, root string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	api, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	// The resync re-queues everything now and then: a step that failed for
	// good (past the rate limiter) is tried again.
	factory := informers.NewSharedInformerFactory(api, time.Minute)
	claims := factory.Core().V1().PersistentVolumeClaims()
	volumes := factory.Core().V1().PersistentVolumes()
	p := &provisioner{api: api, root: root, claims: claims.Lister(), volumes: volumes.Lister(),
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())}
	defer p.queue.ShutDown()
	if _, err := claims.Informer().AddEventHandler(p.handler("claim:")); err != nil {
		return err
	}
	if _, err := volumes.Informer().AddEventHandler(p.handler("volume:")); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	for typ, synced := range factory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			return fmt.Errorf("the %v cache did not sync", typ)
		}
	}
	slog.Info("localpv: provisioning", "provisioner", provisionerName, "root", root)
	go func() { <-ctx.Done(); p.queue.ShutDown() }()
	for p.next(ctx) {
	}
	return nil
}

func (p *provisioner) handler(prefix string) cache.ResourceEventHandler {
	add := func(obj any) {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			p.queue.Add(prefix + key)
		}
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: add, UpdateFunc: func(_, obj any) { add(obj) }}
}

// next handles one queued key; false once the queue is shut down.
func (p *provisioner) next(ctx context.Context) bool {
	key, quit := p.queue.Get()
	if quit {
		return false
	}
	defer p.queue.Done(key)
	var err error
	if name, ok := strings.CutPrefix(key, "claim:"); ok {
		err = p.provision(ctx, name)
	} else if name, ok := strings.CutPrefix(key, "volume:"); ok {
		err = p.release(ctx, name)
	}
	if err != nil {
		slog.Warn("localpv: will retry", "key", key, "err", err)
		p.queue.AddRateLimited(key)
		return true
	}
	p.queue.Forget(key)
	return true
}

// provision gives a claim waiting for this provisioner, whose node the
// scheduler has chosen, its volume on that node.
func (p *provisioner) provision(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pvc, err := p.claims.PersistentVolumeClaims(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	node := pvc.Annotations[annSelectedNode]
	if pvc.Annotations[annProvisioner] != provisionerName || pvc.Spec.VolumeName != "" ||
		pvc.Status.Phase != corev1.ClaimPending || pvc.DeletionTimestamp != nil || node == "" {
		return nil
	}
	pv := p.volumeFor(pvc, node)
	if err := os.MkdirAll(pv.Spec.Local.Path, 0o700); err != nil {
		return err
	}
	// Any container user of the workspace may write its root until cairn's
	// prep sets the volume root's owner and mode.
	if err := os.Chmod(pv.Spec.Local.Path, 0o777); err != nil {
		return err
	}
	_, err = p.api.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err == nil {
		slog.Info("localpv: provisioned", "claim", key, "node", node, "volume", pv.Name)
	}
	return err
}

// volumeFor is the volume of pvc on node: the claim's size and access
// modes, a directory of its own, bound to the claim, affine to the node.
func (p *provisioner) volumeFor(pvc *corev1.PersistentVolumeClaim, node string) *corev1.PersistentVolume {
	name := "pvc-" + string(pvc.UID)
	fs := corev1.PersistentVolumeFilesystem
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{annProvisionBy: provisionerName}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: pvc.Spec.Resources.Requests[corev1.ResourceStorage]},
			AccessModes:                   pvc.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              *pvc.Spec.StorageClassName,
			VolumeMode:                    &fs,
			ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID},
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				Local: &corev1.LocalVolumeSource{Path: filepath.Join(p.root, node, name)}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
					{Key: hostnameLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}}},
		},
	}
}

// release deletes a volume of this provisioner whose claim is gone: its
// directory first, then the object, so a failure leaves the object to
// retry with.
func (p *provisioner) release(ctx context.Context, name string) error {
	pv, err := p.volumes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if pv.Annotations[annProvisionBy] != provisionerName || pv.Status.Phase != corev1.VolumeReleased ||
		pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete || pv.Spec.Local == nil {
		return nil
	}
	dir := pv.Spec.Local.Path
	if rel, err := filepath.Rel(p.root, dir); err != nil || !filepath.IsLocal(rel) || strings.Count(rel, "/") != 1 {
		slog.Error("localpv: not releasing a volume whose directory is not one of its own", "volume", name, "dir", dir)
		return nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	err = p.api.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{})
	if err == nil || apierrors.IsNotFound(err) {
		slog.Info("localpv: released", "volume", name)
		return nil
	}
	return err
}
