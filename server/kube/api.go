package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// The adapter speaks to two API groups, core/v1 and storage.k8s.io/v1,
// through REST clients over a scheme that knows only their types.
// client-go's Clientset and its scheme link every group a cluster can
// serve (some 50 packages of types); the cairn binary is also the CLI, and
// every CLI run paid for them in startup time and ~8 MiB of resident
// memory, against the CLI's 64 MiB transfer budget.
var (
	scheme         = runtime.NewScheme()
	codecs         = serializer.NewCodecFactory(scheme)
	parameterCodec = runtime.NewParameterCodec(scheme)
)

func init() {
	// The list, get, create and delete options, and watch events, as
	// every group's scheme registers them.
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, storagev1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(fmt.Sprintf("kube: register API types: %v", err))
		}
	}
}

// api is the cluster's REST API as the adapter uses it.
type api struct {
	core    rest.Interface // /api/v1
	storage rest.Interface // /apis/storage.k8s.io/v1
}

func newAPI(rc *rest.Config) (api, error) {
	core, err := groupClient(rc, "/api", corev1.SchemeGroupVersion)
	if err != nil {
		return api{}, err
	}
	storage, err := groupClient(rc, "/apis", storagev1.SchemeGroupVersion)
	if err != nil {
		return api{}, err
	}
	return api{core: core, storage: storage}, nil
}

func groupClient(rc *rest.Config, path string, gv schema.GroupVersion) (*rest.RESTClient, error) {
	c := rest.CopyConfig(rc)
	c.APIPath = path
	c.GroupVersion = &gv
	c.NegotiatedSerializer = rest.CodecFactoryForGeneratedClient(scheme, codecs).WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	return rest.RESTClientFor(c)
}

type (
	podAPI   = objectAPI[corev1.Pod, *corev1.Pod, corev1.PodList, *corev1.PodList]
	claimAPI = objectAPI[corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaim,
		corev1.PersistentVolumeClaimList, *corev1.PersistentVolumeClaimList]
	volumeAPI = objectAPI[corev1.PersistentVolume, *corev1.PersistentVolume,
		corev1.PersistentVolumeList, *corev1.PersistentVolumeList]
	nodeAPI  = objectAPI[corev1.Node, *corev1.Node, corev1.NodeList, *corev1.NodeList]
	classAPI = objectAPI[storagev1.StorageClass, *storagev1.StorageClass, storagev1.StorageClassList, *storagev1.StorageClassList]
)

func (a api) pods(ns string) podAPI { return podAPI{rc: a.core, ns: ns, name: "pods"} }
func (a api) claims(ns string) claimAPI {
	return claimAPI{rc: a.core, ns: ns, name: "persistentvolumeclaims"}
}
func (a api) volumes() volumeAPI { return volumeAPI{rc: a.core, name: "persistentvolumes"} }
func (a api) nodes() nodeAPI     { return nodeAPI{rc: a.core, name: "nodes"} }
func (a api) classes() classAPI  { return classAPI{rc: a.storage, name: "storageclasses"} }

// podLogs is the request for a pod's log.
func (a api) podLogs(ns, pod string, opts *corev1.PodLogOptions) *rest.Request {
	return a.core.Get().Namespace(ns).Resource("pods").Name(pod).SubResource("log").VersionedParams(opts, parameterCodec)
}

// objectAPI is one kind of object in one namespace ("" for a kind that has
// none), with the typed client's calls: T is the object, L its list, P and
// PL their pointers.
type objectAPI[T any, P interface {
	*T
	runtime.Object
}, L any, PL interface {
	*L
	runtime.Object
}] struct {
	rc   rest.Interface
	ns   string
	name string // the plural the API's paths use
}

func (r objectAPI[T, P, L, PL]) request(verb func() *rest.Request) *rest.Request {
	return verb().NamespaceIfScoped(r.ns, r.ns != "").Resource(r.name)
}

func (r objectAPI[T, P, L, PL]) Get(ctx context.Context, name string, opts metav1.GetOptions) (*T, error) {
	out := P(new(T))
	err := r.request(r.rc.Get).Name(name).VersionedParams(&opts, parameterCodec).Do(ctx).Into(out)
	return out, err
}

func (r objectAPI[T, P, L, PL]) List(ctx context.Context, opts metav1.ListOptions) (*L, error) {
	out := PL(new(L))
	err := r.request(r.rc.Get).VersionedParams(&opts, parameterCodec).Do(ctx).Into(out)
	return out, err
}

func (r objectAPI[T, P, L, PL]) Create(ctx context.Context, obj *T, opts metav1.CreateOptions) (*T, error) {
	out := P(new(T))
	err := r.request(r.rc.Post).VersionedParams(&opts, parameterCodec).Body(P(obj)).Do(ctx).Into(out)
	return out, err
}

func (r objectAPI[T, P, L, PL]) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return r.request(r.rc.Delete).Name(name).Body(&opts).Do(ctx).Error()
}

func (r objectAPI[T, P, L, PL]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return r.request(r.rc.Get).VersionedParams(&opts, parameterCodec).Watch(ctx)
}
