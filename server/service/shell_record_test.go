package service_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/cast"
	"github.com/cairn-dev/cairn/server/service"
)

// bucket is a fake store for held objects: Put checks the length and the
// SHA-256 as a store does; Stat and ReadHead read what was put.
type bucket struct {
	mu       sync.Mutex
	objects  map[string][]byte
	types    map[string]string
	puts     int
	inserted []cairn.Artifact
}

// recordingStore makes f's bucket and artifact rows work for a recording;
// putErr, when set, is every Put's answer.
func recordingStore(f *shellFixture, putErr error) *bucket {
	b := &bucket{objects: map[string][]byte{}, types: map[string]string{}}
	f.objects.PutFunc = func(_ context.Context, key string, body io.Reader, size int64, sum []byte, contentType string) error {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.puts++
		if putErr != nil {
			return putErr
		}
		data, err := io.ReadAll(body)
		if err != nil {
			return err
		}
		if d := sha256.Sum256(data); int64(len(data)) != size || !bytes.Equal(d[:], sum) {
			return fmt.Errorf("bad digest or size")
		}
		b.objects[key], b.types[key] = data, contentType
		return nil
	}
	f.objects.StatFunc = func(_ context.Context, key string) (*service.ObjectInfo, error) {
		b.mu.Lock()
		defer b.mu.Unlock()
		data, ok := b.objects[key]
		if !ok {
			return nil, service.ErrObjectNotFound
		}
		d := sha256.Sum256(data)
		return &service.ObjectInfo{Key: key, Size: int64(len(data)), LastModified: f.now,
			SHA256B64: base64.StdEncoding.EncodeToString(d[:])}, nil
	}
	f.objects.ReadHeadFunc = func(_ context.Context, key string, n int64) ([]byte, error) {
		b.mu.Lock()
		defer b.mu.Unlock()
		data := b.objects[key]
		return data[:min(int64(len(data)), n)], nil
	}
	f.objects.DeleteFunc = func(_ context.Context, key string) error {
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(b.objects, key)
		return nil
	}
	f.store.ArtifactNameTakenFunc = func(context.Context, string, string) (bool, error) { return false, nil }
	f.store.ObjectKeyUsedFunc = func(context.Context, string) (bool, error) { return false, nil }
	f.store.WithTxFunc = func(_ context.Context, fn func(service.Store) error) error { return fn(f.store) }
	f.store.InsertArtifactFunc = func(_ context.Context, a *cairn.Artifact) error {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.inserted = append(b.inserted, *a)
		return nil
	}
	return b
}

func (b *bucket) artifacts() []cairn.Artifact {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]cairn.Artifact(nil), b.inserted...)
}

func (b *bucket) object(key string) ([]byte, string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.objects[key], b.types[key]
}

func (b *bucket) putCalls() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.puts
}

// requireEmptyDir checks that no recording file is left behind.
func requireEmptyDir(t *testing.T, dir string) {
	t.Helper()
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, left, "the recording's file is removed")
}

// played plays a recording into a fake terminal that keeps the output.
func played(t *testing.T, data []byte) string {
	t.Helper()
	var out bytes.Buffer
	_, _, err := cast.Play(bytes.NewReader(data), &out)
	require.NoError(t, err)
	return out.String()
}

func TestShellV2RecordingStoredAsArtifact(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	v, ws := setupV2(t, service.ShellConfig{Record: service.ShellRecording{Dir: dir}})
	b := recordingStore(v.f, nil)
	o := open(ws)
	o.Record = true // opt-in for this shell only
	info, err := v.s.CreateShell(cairn.WithActor(t.Context(), "ops"), o)
	require.NoError(t, err)
	v.f.mu.Lock()
	st := v.f.streams[len(v.f.streams)-1]
	v.f.mu.Unlock()

	a := v.dial(t, "/attach", info.ShellID, info.Secret) // resizes 120×40 → 90×20
	require.NoError(t, st.Print([]byte("cairn-42\r\n")))
	_, err = a.ReadOutput("cairn-42")
	require.NoError(t, err)
	st.Exit(0)
	row := v.closed(t, info.ShellID)
	require.Equal(t, "exited", row.Metadata["reason"])

	arts := b.artifacts()
	require.Len(t, arts, 1)
	art := arts[0]
	require.Equal(t, "shell-"+info.ShellID+"_cast", art.Name)
	require.NoError(t, cairn.ValidateName("artifact", art.Name))
	require.Equal(t, cast.MIME, art.MIMEType)
	data, typ := b.object(art.ObjectKey)
	require.Equal(t, cast.MIME, typ)
	require.Equal(t, int64(len(data)), art.Size)
	require.NotNil(t, art.SHA256B64)
	require.Contains(t, *art.Description, "reason exited")
	require.Contains(t, *art.Description, fmt.Sprintf("%d bytes", art.Size))
	require.NotContains(t, *art.Description, "truncated")
	require.Contains(t, played(t, data), "cairn-42")
	require.Contains(t, string(data), `"r", "90x20"`, "the attach's resize is recorded")

	news := v.f.audits(cairn.AuditNewArtifact)
	require.Len(t, news, 1)
	require.Equal(t, "ops", *news[0].Actor)
	require.Equal(t, art.ID, news[0].Metadata["artifact_id"])
	requireEmptyDir(t, dir)
}

func TestShellV2RecordingTruncated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	v, ws := setupV2(t, service.ShellConfig{Record: service.ShellRecording{Enabled: true, MaxBytes: 512, Dir: dir}})
	b := recordingStore(v.f, nil)
	info, st := v.create(t, ws)
	for range 8 {
		require.NoError(t, st.Print([]byte(strings.Repeat("x", 100))))
	}
	st.Exit(0)
	v.closed(t, info.ShellID)

	arts := b.artifacts()
	require.Len(t, arts, 1)
	require.LessOrEqual(t, arts[0].Size, int64(512))
	require.Contains(t, *arts[0].Description, "(truncated)")
	data, _ := b.object(arts[0].ObjectKey)
	require.Contains(t, string(data), "recording truncated at")
	requireEmptyDir(t, dir)
}

func TestShellV2RecordingStoreFailureStillTearsDown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	v, ws := setupV2(t, service.ShellConfig{Record: service.ShellRecording{Enabled: true, Dir: dir}})
	b := recordingStore(v.f, &cairn.Error{Reason: cairn.ReasonStoreUnavailable, Detail: "down", Err: errors.New("dial")})
	info, st := v.create(t, ws)
	require.NoError(t, st.Print([]byte("lost;")))
	st.Exit(0)
	row := v.closed(t, info.ShellID)
	require.Equal(t, "exited", row.Metadata["reason"])
	require.Equal(t, 1, st.Closes(), "the container is torn down")
	require.Equal(t, 1, b.putCalls())
	require.Empty(t, b.artifacts())
	require.Empty(t, v.f.audits(cairn.AuditNewArtifact))
	require.Contains(t, v.log.String(), "shell recording not stored")
	requireEmptyDir(t, dir)
}

func TestShellV2NotRecordedUnlessAsked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	v, ws := setupV2(t, service.ShellConfig{Record: service.ShellRecording{Dir: dir}})
	b := recordingStore(v.f, nil)
	info, st := v.create(t, ws)
	require.NoError(t, st.Print([]byte("private;")))
	requireEmptyDir(t, dir)
	st.Exit(0)
	v.closed(t, info.ShellID)
	require.Zero(t, b.putCalls())
	require.Empty(t, b.artifacts())
}

func TestShellV2RecordingEndsWithKill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	v, ws := setupV2(t, service.ShellConfig{Record: service.ShellRecording{Enabled: true, Dir: dir}})
	b := recordingStore(v.f, nil)
	info, st := v.create(t, ws)
	require.NoError(t, st.Print([]byte("before-kill;")))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "the recording is written while the shell runs")
	fi, err := entries[0].Info()
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	err = v.s.KillShell(cairn.WithActor(t.Context(), "ops"), info.ShellID)
	require.NoError(t, err)
	v.closed(t, info.ShellID)
	arts := b.artifacts()
	require.Len(t, arts, 1)
	require.Contains(t, *arts[0].Description, "reason terminated")
	requireEmptyDir(t, dir)
	require.Equal(t, 1, st.Closes())
}

func TestShellV1RecordingStoredAsArtifact(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, base := setup(t)
	ws := base.newWorkspace(cairn.VolumeReady)
	s, f := setupShells(t, service.ShellConfig{SessionConfig: service.SessionConfig{Enabled: true}, Record: service.ShellRecording{Dir: dir}}, ws)
	b := recordingStore(f, nil)
	o := open(ws)
	o.Record = true // the v1 handshake's record=true
	sess, err := s.OpenShell(cairn.WithActor(t.Context(), "ops"), o)
	require.NoError(t, err)
	f.mu.Lock()
	fake := f.streams[len(f.streams)-1]
	f.mu.Unlock()
	sess.Run(func(ctx context.Context, st ptyshell.Stream, opts ptyshell.ServeOptions) ptyshell.ServeResult {
		require.NoError(t, st.Start(ctx))
		require.NoError(t, opts.Running(ctx))
		require.NoError(t, st.Resize(ctx, ptyshell.Size{Cols: 90, Rows: 20}))
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Len(t, entries, 1, "the recording is written while the shell runs")
		go func() {
			_ = fake.Print([]byte("v1-out;")) // read below
			fake.Exit(0)
		}()
		out, err := io.ReadAll(st)
		require.NoError(t, err)
		require.Equal(t, "v1-out;", string(out))
		_ = st.Close()
		return ptyshell.ServeResult{Reason: ptyshell.ReasonExited, Running: true, BytesOut: int64(len(out))}
	})

	arts := b.artifacts()
	require.Len(t, arts, 1)
	require.Equal(t, "shell-"+sess.ID()+"_cast", arts[0].Name)
	require.Equal(t, cast.MIME, arts[0].MIMEType)
	require.Contains(t, *arts[0].Description, "reason exited")
	data, _ := b.object(arts[0].ObjectKey)
	require.Equal(t, "v1-out;", played(t, data))
	require.Contains(t, string(data), `"r", "90x20"`)
	require.Len(t, f.audits(cairn.AuditShellClosed), 1)
	requireEmptyDir(t, dir)
}
