package runtimetest

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

func transferSpec(command, volume, workspaceID string, env map[string]string) service.SidecarSpec {
	env[sidecar.EnvMountRoot] = cairn.MountPath
	return service.SidecarSpec{
		Command: command, Role: "cairn-" + command, Subject: workspaceID, WorkspaceID: workspaceID,
		VolumeName: volume, Env: env, Transfer: true,
	}
}

func downloadSpec(volume, workspaceID, url, target string) service.SidecarSpec {
	return transferSpec(sidecar.CommandDownload, volume, workspaceID,
		map[string]string{sidecar.EnvURL: url, sidecar.EnvTargetPath: target})
}

func putSpec(volume, workspaceID, url, source string) service.SidecarSpec {
	return transferSpec(sidecar.CommandPut, volume, workspaceID,
		map[string]string{sidecar.EnvURL: url, sidecar.EnvSourcePath: source, sidecar.EnvMaxSize: "1048576"})
}

func testSidecar(t *testing.T, h Harness) {
	t.Run("OKDownloadThenPutRoundTrip", func(t *testing.T) {
		t.Parallel()
		s := h.New(t, 0)
		volume, id := provision(t, s)
		body := bytes.Repeat([]byte("cairn on every runtime\n"), 1000)
		st := newStore(t, h, body)

		res := runOK(t, s.Runtime, downloadSpec(volume, id, st.URL+"/obj", cairn.MountPath+"/file.txt"))
		require.True(t, strings.HasSuffix(res.DownloadedPath, "file.txt"), "downloaded to %q", res.DownloadedPath)
		require.EqualValues(t, len(body), *res.Size)

		res = runOK(t, s.Runtime, putSpec(volume, id, st.URL+"/up", cairn.MountPath+"/file.txt"))
		require.EqualValues(t, len(body), *res.Size)
		require.Equal(t, body, st.received(), "the bytes went to the volume and back")
	})

	t.Run("FailPathOutsideMount", func(t *testing.T) {
		t.Parallel()
		s := h.New(t, 0)
		volume, id := provision(t, s)
		st := newStore(t, h, []byte("x"))
		out, res := run(t, s.Runtime, downloadSpec(volume, id, st.URL+"/obj", cairn.MountPath+"/../../etc/escaped"))
		require.NotEqual(t, 0, out.ExitCode)
		require.Equal(t, sidecar.ReasonPathOutsideMount, res.ReasonText(), "output: %q", out.Output)
	})

	t.Run("FailSourceNotFound", func(t *testing.T) {
		t.Parallel()
		s := h.New(t, 0)
		volume, id := provision(t, s)
		st := newStore(t, h, nil)
		out, res := run(t, s.Runtime, putSpec(volume, id, st.URL+"/up", cairn.MountPath+"/no/such/file"))
		require.NotEqual(t, 0, out.ExitCode)
		require.Equal(t, sidecar.ReasonSourceNotFound, res.ReasonText(), "output: %q", out.Output)
		require.Nil(t, st.received(), "nothing was sent")
	})

	t.Run("ErrSidecarTimeoutAndRemoved", func(t *testing.T) {
		t.Parallel()
		s := h.New(t, 3*time.Second)
		// Unprepared: the short timeout holds every sidecar of the
		// subject, and a prep sidecar on a loaded node may take longer.
		volume, id := createVolume(t, s)
		st := newStore(t, h, nil)
		began := time.Now()
		out, err := s.Runtime.RunSidecar(t.Context(), downloadSpec(volume, id, st.URL+"/hang", cairn.MountPath+"/never"))
		require.Nil(t, out)
		require.Equal(t, cairn.ReasonSidecarTimeout, cairn.ErrorReason(err), "err: %v", err)
		require.Less(t, time.Since(began), 30*time.Second, "stopped soon after the timeout")
		requireNoSidecars(t, s)
	})
}

// requireNoSidecars waits until the app has no sidecar left: a removal
// the engine finishes after answering (a pod's deletion) is allowed its
// moment.
func requireNoSidecars(t *testing.T, s *Subject) {
	t.Helper()
	require.Eventually(t, func() bool {
		list, err := s.Containers.ListSidecars(t.Context(), s.AppName)
		return err == nil && len(list) == 0
	}, 30*time.Second, 100*time.Millisecond, "the app's sidecars are removed")
}
