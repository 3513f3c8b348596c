package service_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"os"
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
