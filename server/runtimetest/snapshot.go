package runtimetest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

// casHost plays the object store and the server's content index for the
// snapshot and restore sidecars: PUT and GET of /o/KEY, a digest's
// location, and the answers of the Need/Grant conversation.
type casHost struct {
	URL string

	mu      sync.Mutex
	objects map[string][]byte
	where   map[string]sidecar.Location // by hex digest; Object is an index into keys
	keys    []string
	uploads int
}

func newCASHost(t *testing.T, h Harness) *casHost {
	t.Helper()
	l, err := new(net.ListenConfig).Listen(t.Context(), "tcp", net.JoinHostPort(cmp.Or(h.Host, "127.0.0.1"), "0"))
	require.NoError(t, err)
	c := &casHost{URL: "http://" + l.Addr().String(), objects: map[string][]byte{}, where: map[string]sidecar.Location{}}
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /o/{key}", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
		sum := sha256.Sum256(b)
		if err != nil || base64.StdEncoding.EncodeToString(sum[:]) != r.Header.Get("x-amz-checksum-sha256") {
			http.Error(w, "bad digest", http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		c.objects[r.PathValue("key")] = b
		c.mu.Unlock()
	})
	mux.HandleFunc("GET /o/{key}", func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		b, ok := c.objects[r.PathValue("key")]
		c.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(b)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return c
}

// grant answers the sidecars as the server does, minus the database.
func (c *casHost) grant(_ context.Context, n sidecar.Need) (sidecar.Grant, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var g sidecar.Grant
	switch n.Need {
	case sidecar.NeedHave:
		for i, d := range n.Digests {
			if _, ok := c.where[d]; !ok {
				g.Missing = append(g.Missing, i)
			}
		}
	case sidecar.NeedBlob, sidecar.NeedBundle, sidecar.NeedManifest:
		key := fmt.Sprintf("obj%d", len(c.keys))
		c.keys = append(c.keys, key)
		c.uploads++
		if n.Need == sidecar.NeedBlob {
			raw, _ := base64.StdEncoding.DecodeString(n.SHA256B64)
			c.where[fmt.Sprintf("%x", raw)] = sidecar.Location{Object: len(c.keys) - 1, Size: n.Size}
		}
		for _, m := range n.Members {
			c.where[m.SHA256] = sidecar.Location{Object: len(c.keys) - 1, Offset: m.Offset, Size: m.Size, Bundle: true}
		}
		g.URL = c.URL + "/o/" + key
	case sidecar.NeedLocate:
		for _, d := range n.Digests {
			l := c.where[d]
			g.URLs = append(g.URLs, c.URL+"/o/"+c.keys[l.Object])
			g.Locations = append(g.Locations, sidecar.Location{Object: len(g.URLs) - 1, Offset: l.Offset, Size: l.Size, Bundle: l.Bundle})
		}
	}
	return g, nil
}

// testSnapshot: a tree snapshotted from one volume (mounted read-only) and
// restored into another is the same tree, names, types, modes, sizes,
// mtimes and bytes; a second snapshot of the same tree uploads only its
// manifest (which may differ from the first's in the stat of files that
// settled meanwhile).
func testSnapshot(t *testing.T, h Harness) {
	s := h.New(t, 0)
	from, fromID := provision(t, s)
	into, intoID := provision(t, s)
	body := bytes.Repeat([]byte("snapshot me "), 40_000) // past the bundle bound: one blob
	st := newStore(t, h, body)
	runOK(t, s.Runtime, downloadSpec(from, fromID, st.URL+"/obj", cairn.MountPath+"/big"))
	writer := service.BrowseTarget{WorkspaceID: fromID, VolumeName: from, Writable: true}
	change := func(req sidecar.BrowseRequest) {
		t.Helper()
		reply, err := s.Runtime.Browse(t.Context(), writer, req)
		require.NoError(t, err)
		require.True(t, reply.OK, "%+v", reply)
	}
	change(sidecar.BrowseRequest{Op: sidecar.OpMkdir, Path: cairn.MountPath + "/d/e", Parents: true, Mode: "0750"})
	for i, mode := range []string{"0600", "0644", "0755"} {
		data := []byte(strings.Repeat("small ", i+1))
		change(sidecar.BrowseRequest{Op: sidecar.OpPut, Path: fmt.Sprintf("%s/d/e/f%d", cairn.MountPath, i), Mode: mode,
			Size: int64(len(data)), Body: data})
	}
	require.NoError(t, s.Runtime.StopWriter(t.Context(), fromID))

	c := newCASHost(t, h)
	snap := runOK(t, s.Runtime, snapshotSpec(from, fromID, c, nil))
	require.Equal(t, 7, snap.Entries, "root, d, d/e, three files and big")
	c.mu.Lock()
	uploads := c.uploads
	c.mu.Unlock()
	again := runOK(t, s.Runtime, snapshotSpec(from, fromID, c, nil))
	require.Equal(t, snap.Entries, again.Entries)
	require.Zero(t, again.UploadedBytes)
	c.mu.Lock()
	require.Equal(t, uploads+1, c.uploads, "only the manifest goes up again")
	c.mu.Unlock()

	c.mu.Lock()
	manifest := c.keys[len(c.keys)-1]
	c.mu.Unlock()
	restored := runOK(t, s.Runtime, snapshotSpec(into, intoID, c, map[string]string{
		sidecar.EnvURL: c.URL + "/o/" + manifest, sidecar.EnvArchiveSHA256: again.SHA256B64}))
	require.Equal(t, snap.Entries, restored.Entries)
	want := treeOf(t, s, fromID, from)
	require.Contains(t, want, cairn.MountPath+"/d/e/f2 file 0755 18 ")
	require.Equal(t, want, treeOf(t, s, intoID, into))
	require.NoError(t, s.Runtime.StopBrowse(t.Context(), fromID))
	require.NoError(t, s.Runtime.StopBrowse(t.Context(), intoID))
	requireNoSidecars(t, s)
}

// snapshotSpec is a snapshot of volume, or with restore set a restore
// into it, conversing with c.
func snapshotSpec(volume, workspaceID string, c *casHost, restore map[string]string) service.SidecarSpec {
	command, env := sidecar.CommandSnapshot, map[string]string{}
	if restore != nil {
		command, env = sidecar.CommandRestore, restore
	}
	spec := transferSpec(command, volume, workspaceID, env)
	spec.Dialog = c.grant
	return spec
}

// treeOf describes every entry of a volume, contents included, through
// its reader.
func treeOf(t *testing.T, s *Subject, workspaceID, volume string) string {
	t.Helper()
	target := service.BrowseTarget{WorkspaceID: workspaceID, VolumeName: volume}
	reply, err := s.Runtime.Browse(t.Context(), target, sidecar.BrowseRequest{Op: sidecar.OpTree, Path: cairn.MountPath, Depth: 8})
	require.NoError(t, err)
	require.True(t, reply.OK, "%+v", reply)
	var b strings.Builder
	for _, e := range reply.Tree {
		fmt.Fprintf(&b, "%s %s %s %d %s", e.Path, e.Type, e.Mode, e.Size, e.MTime.UTC().Format(time.RFC3339Nano))
		if e.Type == cairn.FileTypeFile {
			rd, err := s.Runtime.Browse(t.Context(), target, sidecar.BrowseRequest{Op: sidecar.OpRead, Path: e.Path, Length: sidecar.MaxReadBytes})
			require.NoError(t, err)
			require.True(t, rd.OK, "%+v", rd)
			sum := sha256.Sum256(rd.Data)
			fmt.Fprintf(&b, " %x", sum)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
