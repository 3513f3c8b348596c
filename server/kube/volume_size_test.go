package kube

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestClaimSize(t *testing.T) {
	t.Parallel()
	r := offline(Config{AppName: "app", VolumeSize: resource.MustParse("2Gi"), MaxVolumeSize: resource.MustParse("8Gi")})

	sized := r.claimFor("app-ws1", "app-ws1", nil, 5<<30)
	require.Equal(t, "5Gi", sized.Spec.Resources.Requests.Storage().String(), "the workspace's size_bytes, exactly")
	odd := r.claimFor("app-ws2", "app-ws2", nil, 1_000_000_001)
	require.Equal(t, int64(1_000_000_001), odd.Spec.Resources.Requests.Storage().Value(), "a size in plain bytes is not rounded")
	plain := r.claimFor("app-ws3", "app-ws3", nil, 0)
	require.Equal(t, "2Gi", plain.Spec.Resources.Requests.Storage().String(), "no size: kubernetes.volumeSize")

	require.Equal(t, int64(8<<30), r.MaxVolumeBytes())
	require.Equal(t, int64(100<<30), offline(Config{}).MaxVolumeBytes(), "the default bound")
}
