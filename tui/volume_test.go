package tui

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/widgets/form"
)

func TestVolumeNeedsReady(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	openArtifacts(t, h, cairn.ArtifactRecorded)
	for _, k := range []string{"i", "L", "I"} {
		h.key(k)
		require.Nil(t, h.m.modal, k)
		require.Equal(t, "i needs volume READY — v provisions it", h.statusLine(), k)
	}
}

func TestVolumeSave(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ws, _, _ := readyArtifacts(t, h)
	h.key("i")
	require.IsType(t, &form.Model{}, h.m.modal)
	require.Contains(t, h.view(), "/mnt/cairn/ws/")
	h.typeText("probe.txt")
	require.Contains(t, h.view(), "probe_txt", "the name follows the file")
	h.key("enter")
	require.IsType(t, &form.Model{}, h.m.modal, "a refusal stays in the form")
	require.Contains(t, flat(h.view()), "File in the volume > /mnt/cairn/ws/probe.txt_ no such file in the volume")

	h.b.World.PutVolumeFile(ws.WorkspaceID, "/mnt/cairn/ws/probe.txt", []byte("cairn-42\n"))
	h.key("enter")
	require.Nil(t, h.m.modal)
	require.Equal(t, "✓ saved /mnt/cairn/ws/probe.txt as probe_txt (9 B)", h.statusLine())
	require.Contains(t, h.view(), "probe_txt")
}

func TestVolumeSaveRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	readyArtifacts(t, h)
	h.key("i", "ctrl+u").typeText("/etc/passwd").key("enter")
	require.Contains(t, flat(h.view()), "the path must be inside /mnt/cairn/ws", "checked before any request")
	h.key("ctrl+u").typeText("/mnt/cairn/ws/x.txt")
	for _, c := range []struct {
		reason cairn.Reason
		field  string
		text   string
	}{
		{cairn.ReasonSourceIsDirectory, "File in the volume", "that is a directory — name a single file"},
		{cairn.ReasonSourceChanged, "File in the volume", "the file changed while it was being stored — retry"},
		{cairn.ReasonNameTaken, "Name", "ws-alpha already has an artifact named x_txt"},
	} {
		h.b.ArtifactFromVolumeFunc = func(context.Context, string, cairn.VolumeArtifactCreate) (*cairn.Artifact, error) {
			return nil, &cairn.Error{Reason: c.reason, Status: 400}
		}
		h.key("enter")
		require.Contains(t, flat(h.view()), c.text, c.reason)
		require.IsType(t, &form.Model{}, h.m.modal)
	}
	h.b.ArtifactFromVolumeFunc = func(context.Context, string, cairn.VolumeArtifactCreate) (*cairn.Artifact, error) {
		return nil, &cairn.Error{Reason: cairn.ReasonDockerUnavailable, Status: 503}
	}
	h.key("enter")
	require.Nil(t, h.m.modal, "other errors close the form")
	require.Equal(t, "✕ error: Docker is unavailable on the server — try again", h.statusLine())
}

func TestVolumeLoad(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ws, _, _ := readyArtifacts(t, h)
	cursorOn(t, h, "model_bin")
	h.key("L")
	require.Equal(t, "i model_bin is MISSING_OBJECT — nothing to load", h.statusLine())
	cursorOn(t, h, "report_csv")
	h.key("L")
	require.Contains(t, flat(h.view()), "> /mnt/cairn/ws/report_csv_ an existing file there is overwritten")
	h.b.LoadIntoVolumeFunc = func(context.Context, string, string) error {
		return &cairn.Error{Reason: cairn.ReasonTargetDirMissing, Status: 400}
	}
	h.key("enter")
	require.Contains(t, flat(h.view()), "its directory does not exist in the volume — create it first (a shell can)")
	h.b.LoadIntoVolumeFunc = nil
	h.key("enter")
	require.Equal(t, "✓ loaded report_csv into /mnt/cairn/ws/report_csv", h.statusLine())
	b, ok := h.b.World.VolumeFile(ws.WorkspaceID, "/mnt/cairn/ws/report_csv")
	require.True(t, ok)
	require.Equal(t, "id,name\n1,alpha\n", string(b))
}

func TestVolumeUpdateRepairsMissing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ws, _, missing := readyArtifacts(t, h)
	cursorOn(t, h, "model_bin")
	h.b.World.PutVolumeFile(ws.WorkspaceID, "/mnt/cairn/ws/model.bin", []byte("weights"))
	h.key("I")
	require.Contains(t, h.view(), "Repair model_bin from the volume")
	h.typeText("model.bin").key("enter")
	require.Equal(t, "✓ repaired model_bin from /mnt/cairn/ws/model.bin", h.statusLine())
	a, _ := h.m.Store().Artifact(missing.ID)
	require.Equal(t, cairn.ArtifactRecorded, a.State)
}

func TestVolumeFormEscLeavesTheOperationRunning(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ws, _, _ := readyArtifacts(t, h)
	h.b.World.PutVolumeFile(ws.WorkspaceID, "/mnt/cairn/ws/a.txt", []byte("a"))
	h.key("i").typeText("a.txt")
	h.m.Update(modeltest.Key("enter")) // the save's Cmd stays in flight
	require.Contains(t, h.view(), "the server is moving the bytes")
	require.Len(t, h.m.ops.Tasks(), 1)
	h.key("esc")
	require.Nil(t, h.m.modal)
	require.Len(t, h.m.ops.Tasks(), 1, "the operation goes on as a task")
	require.Contains(t, h.statusLine(), "saving /mnt/cairn/ws/a.txt as a_txt…")
}
