package client_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

// snapshotTree is a volume with one of each kind of entry, odd modes and
// owners, content shared by two files, empty files, files past the bundle
// bound and many small ones across more than one bundle.
const snapshotTree = `cd /mnt/cairn/ws && mkdir -p src/deep/er empty sticky && chmod 1777 sticky &&
mkdir setgid && chmod 2750 setgid && chown 1234:5678 setgid &&
printf 'package main\n' > src/main.go && cp src/main.go src/copy.go && : > empty/zero &&
ln -s src/main.go latest && ln -s /etc/passwd abs && ln -s nowhere dangling &&
head -c 3000000 /dev/urandom > big && chmod 600 big && chown 42:43 big && printf 'x' > setgid/one &&
i=0; while [ $i -lt 900 ]; do printf "file %d\n" $i > src/deep/er/f$i; i=$((i+1)); done &&
touch -d '2001-02-03 04:05:06' src/main.go && chmod 4755 src/main.go`

// fingerprint lists every entry of the volume with its type, mode, owner,
// mtime (ns), size, link target and content digest, sorted.
const fingerprint = `cd /mnt/cairn/ws && find . | sort | while read -r p; do
stat -c '%n|%F|%a|%u|%g|%y|%s' "$p"; if [ -L "$p" ]; then readlink "$p"; elif [ -f "$p" ]; then sha256sum < "$p"; fi; done`

func TestSnapshotRestoreFork(t *testing.T) {
	b := newBackend(t)
	c := newClient(t, b.remote(t))
	ctx := t.Context()
	ws := readyWorkspace(t, c, "snapped")
	b.sh(t, ws, snapshotTree)
	want := b.sh(t, ws, fingerprint)
	require.Contains(t, want, "./src/deep/er/f899|")

	snap, err := c.CreateSnapshot(ctx, ws.ID, cairn.SnapshotCreate{Name: "first"})
	require.NoError(t, err)
	require.Equal(t, "first", snap.Name)
	require.False(t, snap.Live)
	require.Equal(t, int64(3000000)+int64(len("package main\n"))*2+1+sumSmall(), snap.Bytes)
	require.Equal(t, snap.Bytes-int64(len("package main\n")), snap.UploadedBytes, "shared content goes up once")

	t.Run("SecondUploadsOnlyWhatChanged", func(t *testing.T) {
		b.sh(t, ws, "printf 'changed' > /mnt/cairn/ws/src/deep/er/f7")
		again, err := c.CreateSnapshot(ctx, ws.ID, cairn.SnapshotCreate{})
		require.NoError(t, err)
		require.Equal(t, int64(len("changed")), again.UploadedBytes)
		require.True(t, strings.HasPrefix(again.Name, "snap-"), again.Name)
		list, err := c.ListSnapshots(ctx, ws.ID)
		require.NoError(t, err)
		require.Len(t, list, 2)
		require.NoError(t, c.DeleteSnapshot(ctx, again.ID))
		_, err = c.GetSnapshot(ctx, again.ID)
		require.Equal(t, cairn.ReasonSnapshotNotFound, cairn.ErrorReason(err))
	})

	t.Run("RestoreGivesBackTheTree", func(t *testing.T) {
		b.sh(t, ws, "cd /mnt/cairn/ws && rm -rf src big && echo new > added && chmod 700 sticky")
		require.NotEqual(t, want, b.sh(t, ws, fingerprint))
		out, err := c.RestoreSnapshot(ctx, ws.ID, snap.ID)
		require.NoError(t, err)
		require.Equal(t, snap.Entries, out.Entries)
		require.Equal(t, want, b.sh(t, ws, fingerprint))
	})

	t.Run("ForkIsAnIndependentCopy", func(t *testing.T) {
		fork, err := c.ForkWorkspace(ctx, ws.ID, cairn.WorkspaceFork{Name: ws.Name + "-fork"})
		require.NoError(t, err)
		require.Equal(t, cairn.VolumeReady, fork.VolumeState)
		require.Equal(t, want, b.sh(t, fork, fingerprint))
		b.sh(t, fork, "echo only-here > /mnt/cairn/ws/forked")
		require.Equal(t, want, b.sh(t, ws, fingerprint), "the source is untouched")

		// The same name again, once the first fork is gone: its snapshot
		// keeps fork-<name>, the second takes a generated one.
		require.NoError(t, c.TeardownVolume(ctx, fork.ID))
		require.NoError(t, c.DeleteWorkspace(ctx, fork.ID))
		again, err := c.ForkWorkspace(ctx, ws.ID, cairn.WorkspaceFork{Name: ws.Name + "-fork"})
		require.NoError(t, err)
		require.Equal(t, want, b.sh(t, again, fingerprint))
		names := map[string]bool{}
		list, err := c.ListSnapshots(ctx, ws.ID)
		require.NoError(t, err)
		for _, s := range list {
			names[s.Name] = true
		}
		require.True(t, names["fork-"+ws.Name+"-fork"])
	})

	t.Run("RefusedWhileMounted", func(t *testing.T) {
		stop := b.mount(t, ws)
		_, err := c.CreateSnapshot(ctx, ws.ID, cairn.SnapshotCreate{})
		require.Equal(t, cairn.ReasonVolumeInUse, cairn.ErrorReason(err))
		_, err = c.RestoreSnapshot(ctx, ws.ID, snap.ID)
		require.Equal(t, cairn.ReasonVolumeInUse, cairn.ErrorReason(err))
		live, err := c.CreateSnapshot(ctx, ws.ID, cairn.SnapshotCreate{Live: true})
		require.NoError(t, err)
		require.True(t, live.Live)
		require.Zero(t, live.UploadedBytes)
		stop()
	})

	t.Run("TamperedContentChangesNothing", func(t *testing.T) {
		b.sh(t, ws, "echo marker > /mnt/cairn/ws/marker")
		before := b.sh(t, ws, fingerprint)
		b.tamperSnapshotObjects(t)
		_, err := c.RestoreSnapshot(ctx, ws.ID, snap.ID)
		require.Equal(t, cairn.ReasonSnapshotCorrupt, cairn.ErrorReason(err), "%v", err)
		require.Equal(t, before, b.sh(t, ws, fingerprint))
		require.NotContains(t, b.sh(t, ws, "ls -a /mnt/cairn/ws"), ".cairn-")
	})
}

// tamperSnapshotObjects overwrites every snapshot content object in the
// store, behind cairn's back, with as many other bytes.
func (b *backend) tamperSnapshotObjects(t *testing.T) {
	t.Helper()
	rows, err := b.db.Query(t.Context(), `SELECT DISTINCT o.key, o.size FROM snapshot_objects o
		JOIN snapshot_content c ON c.object_key = o.key`)
	require.NoError(t, err)
	objects, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct {
		Key  string
		Size int64
	}])
	require.NoError(t, err)
	require.NotEmpty(t, objects)
	for _, o := range objects {
		b.putObject(t, o.Key, bytes.Repeat([]byte{'!'}, int(o.Size)))
	}
}

// sumSmall is the bytes of snapshotTree's 900 small files and setgid/one.
func sumSmall() int64 {
	var n int64
	for i := range 900 {
		n += int64(len("file \n")) + int64(len(itoa(i)))
	}
	return n
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
