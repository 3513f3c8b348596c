package tui

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/tuitest"
)

// TestFlowFiles drives the files pane in a teatest program over the fake
// backend: r lists again, i saves a file and packs a directory, L loads an
// artifact here, X unpacks the packed directory; every path the server is
// asked about comes from the pane, none is typed whole, and each write of
// the volume is followed by a new listing.
func TestFlowFiles(t *testing.T) {
	var ws *cairn.Workspace
	var report *cairn.Artifact
	f := newFlow(t, func(b *tuitest.Backend) {
		ws = b.World.AddWorkspace("ws-alpha", cairn.VolumeReady, "")
		report = b.World.AddArtifact(ws.ID, "report_csv", cairn.ArtifactRecorded, 0, "")
		b.World.SetContent(report.ID, []byte("id,name\n1,alpha\n"))
		b.World.PutVolumeFile(ws.ID, "/mnt/cairn/ws/out/logs/run.log", []byte("started\n"))
		b.World.PutVolumeFile(ws.ID, "/mnt/cairn/ws/out/summary.txt", []byte("ok\n"))
	})
	f.waitFor("ws-alpha", "● READY")
	f.keys("f")
	f.waitFor("files /mnt/cairn/ws (1)", "out/")
	f.keys("enter")
	f.waitFor("files /mnt/cairn/ws/out (2)", "summary.txt")

	t.Log("r: a file made behind the TUI's back shows")
	f.b.World.PutVolumeFile(ws.ID, "/mnt/cairn/ws/out/added.txt", []byte("new\n"))
	f.keys("r")
	f.waitFor("files /mnt/cairn/ws/out (3)", "added.txt")

	t.Log("i on a file saves it; i on a directory packs it")
	f.keys("g", "i") // added.txt: the first by name (the cursor stayed on logs/ through r)
	f.waitFor("Save a volume file of ws-alpha", "/mnt/cairn/ws/out/added.txt")
	f.keys("enter")
	f.waitFor("saved /mnt/cairn/ws/out/added.txt as added_txt (4 B)")
	f.keys("j", "i")
	f.waitFor("Pack a volume directory of ws-alpha", "logs_tar_gz")
	f.keys("enter")
	f.waitFor("packed /mnt/cairn/ws/out/logs as logs_tar_gz")

	t.Log("L loads an artifact into this directory")
	f.keys("L")
	f.waitFor("Load an artifact into /mnt/cairn/ws/out")
	f.tm.Type("report")
	f.keys("enter")
	f.waitFor("Load report_csv into the volume of ws-alpha")
	f.keys("enter")
	f.waitFor("loaded report_csv into /mnt/cairn/ws/out/report_csv", "report_csv ")

	t.Log("X unpacks the packed directory beside it")
	f.keys("X")
	f.waitFor("Unpack an archive into /mnt/cairn/ws/out")
	f.tm.Type("logs_tar")
	f.keys("enter")
	f.waitFor("Unpack logs_tar_gz into the volume of ws-alpha")
	f.keys("enter") // out/logs exists: refused under the field
	f.waitFor("it exists already in the volume")
	f.tm.Type("-copy")
	f.keys("enter")
	f.waitFor("unpacked logs_tar_gz into /mnt/cairn/ws/out/logs-copy (1 entry, 8 B)", "logs-copy/")

	m := f.final()
	arts, _ := m.Store().Artifacts(ws.ID)
	byName := map[string]string{}
	for _, a := range arts {
		byName[a.Name] = a.ID
	}
	var writes []tuitest.VolumeCall
	for _, c := range f.b.VolumeCalls() {
		if c.Method != "ListFiles" {
			writes = append(writes, c)
		}
	}
	require.Equal(t, []tuitest.VolumeCall{
		{Method: "ArtifactFromVolume", WorkspaceID: ws.ID, Path: "/mnt/cairn/ws/out/added.txt", Name: "added_txt"},
		{Method: "ArtifactFromVolume", WorkspaceID: ws.ID, Path: "/mnt/cairn/ws/out/logs", Name: "logs_tar_gz", Format: cairn.ArchiveTarGz},
		{Method: "LoadIntoVolume", ArtifactID: report.ID, Path: "/mnt/cairn/ws/out/report_csv"},
		{Method: "UnpackArtifact", ArtifactID: byName["logs_tar_gz"], Path: "/mnt/cairn/ws/out/logs"},
		{Method: "UnpackArtifact", ArtifactID: byName["logs_tar_gz"], Path: "/mnt/cairn/ws/out/logs-copy"},
	}, writes, "the paths exactly as the pane filled them in")
	outLists := 0
	for _, c := range f.b.VolumeCallsOf("ListFiles") {
		if c.Path == "/mnt/cairn/ws/out" && c.Limit == 1000 {
			outLists++
		}
	}
	require.Equal(t, 4, outLists, "out/ listed on entering, on r, after the load and after the unpack; never after a save")
	got, ok := f.b.World.VolumeFile(ws.ID, "/mnt/cairn/ws/out/logs-copy/run.log")
	require.True(t, ok)
	require.Equal(t, "started\n", string(got))
}
