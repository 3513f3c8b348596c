package tui

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/widgets/confirm"
	"github.com/cairn-dev/cairn/tui/widgets/form"
	"github.com/cairn-dev/cairn/tui/widgets/typed"
)

func worldWS(h *harness, id string) (*cairn.Workspace, bool) {
	d, err := h.b.InspectWorkspace(context.Background(), id)
	if err != nil {
		return nil, false
	}
	return d.Workspace, true
}

func TestCreateWithProvision(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed()
	h.key("n")
	require.IsType(t, &form.Model{}, h.m.modal)
	h.typeText("ws-gamma").key("tab").typeText("first try").key("tab", " ", "enter")
	require.Nil(t, h.m.modal, "closed on success")
	var created *cairn.Workspace
	for _, w := range h.m.Store().Workspaces() {
		created = w
	}
	require.Equal(t, "ws-gamma", created.Name)
	require.Equal(t, "first try", *created.Description)
	require.Equal(t, cairn.VolumeReady, created.VolumeState, "provisioned next")
	require.Equal(t, "✓ provisioned a volume for ws-gamma", h.statusLine())
	require.Empty(t, h.m.ops.Tasks())
	require.False(t, h.m.ops.Busy())
}

func TestFormErrors(t *testing.T) {
	t.Parallel()
	t.Run("InvalidNameStaysClientSide", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.seed()
		calls := 0
		h.b.CreateWorkspaceFunc = func(context.Context, cairn.WorkspaceCreate) (*cairn.Workspace, error) {
			calls++
			return nil, nil
		}
		h.key("n").typeText("bad name").key("enter")
		require.IsType(t, &form.Model{}, h.m.modal)
		require.Contains(t, h.view(), "may only contain ASCII letters")
		require.Zero(t, calls)
	})
	t.Run("NameTakenUnderTheField", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.seed("ws-alpha")
		h.key("n")
		require.NotContains(t, h.view(), "already exists")
		h.typeText("ws-alpha")
		require.Contains(t, h.view(), "a workspace named ws-alpha already exists", "the warning while typing")
		h.key("enter")
		require.IsType(t, &form.Model{}, h.m.modal, "a field error keeps the form open")
		require.Contains(t, h.view(), "a workspace named ws-alpha already exists")
		require.Empty(t, h.m.ops.Tasks())
	})
	t.Run("OtherErrorsCloseWithAToast", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.seed()
		h.b.CreateWorkspaceFunc = func(context.Context, cairn.WorkspaceCreate) (*cairn.Workspace, error) {
			return nil, &cairn.Error{Reason: cairn.ReasonInternal, Status: 500, RequestID: "req-7"}
		}
		h.key("n").typeText("ws-x").key("enter")
		require.Nil(t, h.m.modal)
		require.Equal(t, "✕ error: server error (HTTP 500) — request ID req-7", h.statusLine())
		require.Equal(t, "req-7", h.m.notes.Toasts().Log()[0].RequestID)
	})
}

func TestEditSendsOnlyChangedFields(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ws := h.seed("ws-alpha")[0]
	h.key("e").key("ctrl+u").typeText("ws-omega").key("enter")
	w, _ := worldWS(h, ws.ID)
	require.Equal(t, "ws-omega", w.Name)
	require.Zero(t, h.b.World.Hits("PUT /v1/workspaces/{id}/description"), "an unchanged description is not sent")
	require.Equal(t, "✓ renamed ws-alpha to ws-omega", h.statusLine())
	require.Contains(t, h.view(), "ws-omega")

	h.key("e", "enter")
	require.Equal(t, "i nothing changed", h.statusLine())
}

func TestProvisionGuardsAndPending(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ws := h.seed("ws-alpha")[0]
	release := make(chan struct{})
	h.b.SetupVolumeFunc = func(context.Context, string) error { <-release; return nil }
	h.key("v")
	require.IsType(t, &confirm.Model{}, h.m.modal)
	_, cmd := h.m.Update(modeltest.Key("y"))
	require.Equal(t, "provisioning", h.m.ops.Pending(ws.ID))
	require.Contains(t, h.view(), "⠋ provisioning")
	h.key("e")
	require.Equal(t, "i busy: provisioning", h.statusLine(), "conflicting actions wait")
	go close(release)
	h.b.SetupVolumeFunc = nil
	_ = h.b.World.UpdateWorkspace(ws.ID, func(w *cairn.Workspace) { w.VolumeState = cairn.VolumeReady })
	for _, msg := range h.run(cmd) {
		h.send(msg)
	}
	require.False(t, h.m.ops.Busy())
	require.Contains(t, h.view(), "● READY")
	h.key("v")
	require.Equal(t, "i ws-alpha already has a volume", h.statusLine())
}

func TestConfirmCancelsOnAnyOtherKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed("ws-alpha")
	h.key("v", "n")
	require.Nil(t, h.m.modal)
	require.Equal(t, "i cancelled", h.statusLine())
}

func TestTeardown(t *testing.T) {
	t.Parallel()
	ready := func(t *testing.T, mounts int) (*harness, *cairn.Workspace) {
		h := newHarness(t)
		w := h.b.World.AddWorkspace("ws-alpha", cairn.VolumeReady, "")
		h.b.World.SetMounts(w.ID, mounts)
		h.size(120, 40).hello()
		return h, w
	}
	t.Run("RefusedWhileMounted", func(t *testing.T) {
		t.Parallel()
		h, _ := ready(t, 2)
		h.key("V")
		require.Nil(t, h.m.modal)
		require.Equal(t, "! warning: volume is mounted by 2 running containers — end their shells or tool runs first", h.statusLine())
	})
	t.Run("RefusedWhenUnknown", func(t *testing.T) {
		t.Parallel()
		h, _ := ready(t, -1)
		h.key("V")
		require.Nil(t, h.m.modal)
		require.Contains(t, h.statusLine(), "cannot tell whether the volume is mounted")
	})
	t.Run("TypedName", func(t *testing.T) {
		t.Parallel()
		h, w := ready(t, 0)
		h.key("V")
		require.IsType(t, &typed.Model{}, h.m.modal)
		h.typeText("ws-alph").key("enter")
		require.Contains(t, h.view(), "does not match")
		require.NotNil(t, h.m.modal, "a mismatch stays")
		h.typeText("a").key("enter")
		got, _ := worldWS(h, w.ID)
		require.Equal(t, cairn.VolumeNone, got.VolumeState)
		require.Equal(t, "✓ tore down the volume of ws-alpha", h.statusLine())
	})
	t.Run("ServerRefusalIsASentence", func(t *testing.T) {
		t.Parallel()
		h, _ := ready(t, 0)
		h.b.TeardownVolumeFunc = func(context.Context, string) error {
			return &cairn.Error{Reason: cairn.ReasonVolumeInUse, Status: 409}
		}
		h.key("V").typeText("ws-alpha").key("enter")
		require.Equal(t, "✕ error: volume is mounted by running containers — end their shells or tool runs first", h.statusLine())
	})
	t.Run("LogKeepsWhatTheServerSaid", func(t *testing.T) {
		t.Parallel()
		h, _ := ready(t, 0)
		h.b.TeardownVolumeFunc = func(context.Context, string) error {
			return &cairn.Error{Reason: cairn.ReasonVolumeInUse, Status: 409, RequestID: "req-7f3a",
				Message: "volume in use", Detail: "shells 4f3c2a1e, 9b77d0c2 mount it; end them with DELETE /v1/shells/{id}"}
		}
		h.key("V").typeText("ws-alpha").key("enter").key("!")
		log := flat(h.view())
		require.Contains(t, log, "volume is mounted by running containers")
		entries := h.m.notes.Toasts().Log()
		require.Equal(t, "req-7f3a", entries[len(entries)-1].RequestID)
		require.Contains(t, log, "server: volume in use: shells 4f3c2a1e, 9b77d0c2 mount it", "the log keeps the message and detail")
	})
}

func TestDelete(t *testing.T) {
	t.Parallel()
	t.Run("TypedForNone", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ws := h.seed("ws-alpha")[0]
		h.key("D")
		require.IsType(t, &typed.Model{}, h.m.modal)
		require.Contains(t, h.view(), "Delete ws-alpha? It has no artifacts.")
		h.key("esc")
		require.Equal(t, "i cancelled", h.statusLine())
		h.key("D").typeText("ws-alpha").key("enter")
		_, exists := worldWS(h, ws.ID)
		require.False(t, exists)
		require.Equal(t, "✓ deleted ws-alpha", h.statusLine())
		require.Contains(t, h.view(), "No workspaces yet")
	})
	t.Run("TwoStepsWhenReady", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		w := h.b.World.AddWorkspace("ws-alpha", cairn.VolumeReady, "")
		h.size(120, 40).hello()
		h.key("D")
		require.IsType(t, &confirm.Model{}, h.m.modal)
		require.Contains(t, h.view(), "ws-alpha still has a volume (READY); it must be torn down first.")
		h.key("y")
		require.IsType(t, &typed.Model{}, h.m.modal)
		require.Contains(t, h.view(), "tear down volume "+w.VolumeName[:10])
		h.typeText("ws-alpha").key("enter")
		_, exists := worldWS(h, w.ID)
		require.False(t, exists, "torn down, then deleted")
		require.Equal(t, "✓ deleted ws-alpha", h.statusLine())
	})
	t.Run("RefusedTeardownStopsTheDelete", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		w := h.b.World.AddWorkspace("ws-alpha", cairn.VolumeReady, "")
		h.b.World.SetMounts(w.ID, 1)
		h.size(120, 40).hello()
		h.key("D", "y").typeText("ws-alpha").key("enter")
		_, exists := worldWS(h, w.ID)
		require.True(t, exists)
		require.Equal(t, "✕ error: tear down refused: volume is mounted by running containers — end their shells or tool runs first", h.statusLine())
	})
	t.Run("ArtifactConfirm", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		_, arts := openArtifacts(t, h, cairn.ArtifactRecorded)
		h.key("D")
		require.Contains(t, h.view(), "Delete report_0 (14.0 KiB)? Its object is reclaimed later by the")
		h.key("y")
		_, ok := h.m.Store().Artifact(arts[0].ID)
		require.False(t, ok)
		require.Equal(t, "✓ deleted report_0", h.statusLine())
	})
	t.Run("GoneMeanwhileRemovesTheRow", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.seed("ws-alpha")
		h.b.World.FailNext("DELETE /v1/workspaces/{id}", http.StatusNotFound, cairn.ReasonWorkspaceNotFound)
		h.key("D").typeText("ws-alpha").key("enter")
		require.Equal(t, "✕ error: ws-alpha no longer exists", h.statusLine())
		require.Zero(t, h.m.Store().WorkspaceCount())
	})
}

func TestArtifactEdit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, arts := openArtifacts(t, h, cairn.ArtifactRecorded)
	h.key("e", "tab").typeText("line one").key("enter")
	a, _ := h.m.Store().Artifact(arts[0].ID)
	require.Equal(t, "line one", *a.Description)
	require.Equal(t, "✓ saved the description of report_0", h.statusLine())
}

func TestReadOnly(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.ReadOnly = true })
	h.seed("ws-alpha")
	require.Contains(t, h.header(), "[read-only]")
	for _, k := range []string{"n", "e", "v", "V", "D"} {
		h.key(k)
		require.Nil(t, h.m.modal, k)
	}
	require.Empty(t, h.m.notes.Toasts().Log(), "hidden keys do nothing")
	hints := hintLine(h)
	for _, word := range []string{"new", "edit", "provision", "delete"} {
		require.NotContains(t, hints, word)
	}
	require.Contains(t, hints, "copy")
	require.Equal(t, "i read-only mode", stripStatus(h, h.m.act.Do(actionMsg("ws_new"))))
}

// TestSweepKey: S sweeps the selected workspace now (an admin key): the
// pass's flags in a toast; a token without admin says so; read-only hides
// it.
func TestSweepKey(t *testing.T) {
	t.Parallel()
	t.Run("OKFlagged", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ws := h.seed("ws-alpha")
		var swept []string
		h.b.SweepFunc = func(_ context.Context, id string) (*cairn.SweepResult, error) {
			swept = append(swept, id)
			return &cairn.SweepResult{WorkspaceID: id, ArtifactsFlagged: 2}, nil
		}
		h.key("S")
		require.Equal(t, []string{ws[0].ID}, swept)
		require.Equal(t, "✓ swept ws-alpha: 2 artifacts flagged MISSING_OBJECT", h.statusLine())
		require.False(t, h.m.ops.Busy())
	})
	t.Run("ErrNoAdminScope", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.seed("ws-alpha")
		h.b.SweepFunc = func(context.Context, string) (*cairn.SweepResult, error) {
			return nil, &cairn.Error{Reason: cairn.ReasonForbidden, Status: 403}
		}
		h.key("S")
		require.Equal(t, "✕ error: this token lacks the admin scope", h.statusLine())
	})
	t.Run("HiddenReadOnly", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, func(c *config.Config) { c.ReadOnly = true })
		h.seed("ws-alpha")
		called := false
		h.b.SweepFunc = func(context.Context, string) (*cairn.SweepResult, error) { called = true; return nil, nil }
		h.key("S")
		require.False(t, called)
	})
}

func TestCreateSendsVolumeSize(t *testing.T) {
	t.Parallel()
	created := func(t *testing.T, size string) (*harness, []cairn.WorkspaceCreate) {
		t.Helper()
		h := newHarness(t)
		h.seed()
		var sent []cairn.WorkspaceCreate
		h.b.CreateWorkspaceFunc = func(ctx context.Context, c cairn.WorkspaceCreate) (*cairn.Workspace, error) {
			sent = append(sent, c)
			return h.b.Client.CreateWorkspace(ctx, c)
		}
		// name, description, the provision checkbox, then the size
		h.key("n").typeText("ws-sized").key("tab", "tab", "tab").typeText(size).key("enter")
		return h, sent
	}
	t.Run("Quantity", func(t *testing.T) {
		t.Parallel()
		h, sent := created(t, "10Gi")
		require.Len(t, sent, 1)
		require.Equal(t, int64(10<<30), *sent[0].VolumeMetadata.SizeBytes)
		require.Nil(t, h.m.modal, "closed on success")
		var ws *cairn.Workspace
		for _, w := range h.m.Store().Workspaces() {
			ws = w
		}
		require.Equal(t, int64(10<<30), *ws.VolumeMetadata.SizeBytes, "the server stored it")
	})
	t.Run("EmptyIsUnset", func(t *testing.T) {
		t.Parallel()
		_, sent := created(t, "")
		require.Len(t, sent, 1)
		require.Nil(t, sent[0].VolumeMetadata)
	})
	t.Run("InvalidStaysClientSide", func(t *testing.T) {
		t.Parallel()
		h, sent := created(t, "lots")
		require.Empty(t, sent)
		require.IsType(t, &form.Model{}, h.m.modal)
		require.Contains(t, h.view(), `"lots" is not a size`)
	})
	t.Run("RefusedSizeUnderTheField", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.seed()
		h.b.CreateWorkspaceFunc = func(context.Context, cairn.WorkspaceCreate) (*cairn.Workspace, error) {
			return nil, &cairn.Error{Reason: cairn.ReasonInvalidParameters, Status: 400,
				Detail: "volume_metadata.size_bytes must be at most 1073741824 (1GiB), the largest volume this server provisions; got 10737418240"}
		}
		h.key("n").typeText("ws-big").key("tab", "tab", "tab").typeText("10Gi").key("enter")
		require.IsType(t, &form.Model{}, h.m.modal, "a field error keeps the form open")
		view := h.view()
		at := strings.Index(view, "must be at most")
		require.Positive(t, at, "the server's words are shown")
		require.Less(t, strings.Index(view, "Volume size"), at, "under the size field, the last one")
	})
}
