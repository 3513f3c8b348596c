//go:build kube

package kube_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/kube"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/server/service/servicetest"
)

// TestClaimRequestsWorkspaceSize sets up two workspaces through the
// service on the cluster: the one with size_bytes gets a claim asking for
// exactly that, the other one kubernetes.volumeSize; a size above
// kubernetes.maxVolumeSize is refused before anything is stored.
func TestKubeClaimRequestsWorkspaceSize(t *testing.T) {
	kubeconfig := stacktest.Kubeconfig(t)
	cs := stacktest.KubeClient(t, kubeconfig)
	ns := stacktest.KubeNamespace(t, cs)
	rt, err := kube.New(kube.Config{AppName: ns, Kubeconfig: kubeconfig, Namespace: ns, Image: stacktest.SidecarImage,
		VolumeSize: resource.MustParse("64Mi"), MaxVolumeSize: resource.MustParse("256Mi"), PodStartTimeout: 2 * time.Minute})
	require.NoError(t, err)
	svc := service.New(rowStore(), rt, nil, service.Config{AppName: ns})
	ctx := t.Context()

	sized, err := svc.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "sized",
		VolumeMetadata: &cairn.VolumeMetadata{SizeBytes: new(int64(192 << 20))}})
	require.NoError(t, err)
	plain, err := svc.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "plain"})
	require.NoError(t, err)
	_, err = svc.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "big",
		VolumeMetadata: &cairn.VolumeMetadata{SizeBytes: new(int64(256<<20 + 1))}})
	require.Equal(t, cairn.ReasonInvalidParameters, cairn.ErrorReason(err), "%v", err)
	require.Contains(t, cairn.ErrorDetail(err), "must be at most 268435456")

	for ws, want := range map[*cairn.Workspace]string{sized: "192Mi", plain: "64Mi"} {
		require.NoError(t, svc.SetupVolume(ctx, ws.ID))
		// A claim is named like its volume, lower-cased; the IDs are.
		pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, ws.VolumeName, metav1.GetOptions{})
		require.NoError(t, err)
		require.Equal(t, want, pvc.Spec.Resources.Requests.Storage().String(), "the claim of %s", ws.Name)
	}
}

// rowStore is a store of workspace rows in memory, with no locks: enough
// for one test's creates and setups.
func rowStore() *servicetest.Store {
	rows := map[string]cairn.Workspace{}
	find := func(_ context.Context, id string) (*cairn.Workspace, error) {
		ws, ok := rows[id]
		if !ok {
			return nil, cairn.Errorf(cairn.ReasonWorkspaceNotFound, "no workspace %s", id)
		}
		return &ws, nil
	}
	put := func(_ context.Context, ws *cairn.Workspace) error {
		rows[ws.ID] = *ws
		return nil
	}
	return &servicetest.Store{
		InsertWorkspaceFunc:  put,
		UpdateWorkspaceFunc:  put,
		FindWorkspaceFunc:    find,
		LockWorkspaceRowFunc: find,
		LockWorkspaceFunc: func(context.Context, string, service.LockMode) (func(), error) {
			return func() {}, nil
		},
		InsertAuditFunc: func(context.Context, *cairn.AuditEvent) error { return nil },
	}
}
