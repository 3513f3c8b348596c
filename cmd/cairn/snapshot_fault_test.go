package main

import (
	"context"
	"strings"
	"testing"
	"time"

	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// bigTree fills a volume with enough random bytes that a snapshot or
// restore of it runs for a while.
const bigTree = "cd /mnt/cairn/ws && for i in 1 2 3 4 5 6; do head -c 50000000 /dev/urandom > big$i; done && echo old > mark"

// treeSums lists every entry with its metadata and content digest.
const treeSums = "cd /mnt/cairn/ws && find . | sort | while read -r p; do stat -c '%n|%F|%a|%u|%g|%y|%s' \"$p\"; " +
	"if [ -f \"$p\" ] && [ ! -L \"$p\" ]; then sha256sum < \"$p\"; fi; done"

// TestSnapshotOfAKilledServer: a server killed (SIGKILL) mid-snapshot
// records no snapshot, and the maintainer of another replica leaves no
// object of the run once its uploads are past their grace; a server killed
// mid-restore leaves the volume with the old tree or the new, whole, and
// the next restore leaves no trace of the first.
func TestSnapshotOfAKilledServer(t *testing.T) {
	st := newShellStack(t)
	top := t // servers outlive the subtest that starts them
	a := st.start(t, shellServerOpts{maintainer: true})
	ws := a.readyWorkspace(t)
	stacktest.RunInVolume(t, st.app, ws.VolumeName, bigTree)
	db, err := pgx.Connect(t.Context(), st.pg.DSN(st.db))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close(context.Background()) })

	t.Run("MidSnapshot", func(t *testing.T) {
		done := make(chan error, 1)
		go func() {
			_, err := a.admin.CreateSnapshot(context.Background(), ws.ID, cairn.SnapshotCreate{})
			done <- err
		}()
		require.Eventually(t, func() bool { return rows(t, db, "SELECT count(*) FROM snapshot_objects") > 0 },
			time.Minute, 20*time.Millisecond, "the snapshot starts uploading")
		require.NoError(t, a.cmd.Process.Kill())
		_ = a.cmd.Wait()
		require.Error(t, <-done, "the client sees its connection lost")
		st.awaitNoSidecar(t, "snapshot")

		a = st.start(top, shellServerOpts{maintainer: true})
		list, err := a.admin.ListSnapshots(t.Context(), ws.ID)
		require.NoError(t, err)
		require.Empty(t, list, "no snapshot of the killed run")
		require.Zero(t, rows(t, db, "SELECT count(*) FROM snapshot_content"), "nor its content")
		// Behind cairn's back, as time would: the run's uploads are past
		// their grace.
		_, err = db.Exec(t.Context(), "UPDATE snapshot_objects SET created_at = created_at - interval '1 day'")
		require.NoError(t, err)
		res, err := a.admin.Sweep(t.Context(), "")
		require.NoError(t, err)
		require.Positive(t, res.SnapshotObjectsDeleted)
		require.Zero(t, rows(t, db, "SELECT count(*) FROM snapshot_objects"))
		require.Equal(t, []string{"snapshots/"}, st.objects(t, "snapshots/"), "no object of the run is left")
	})

	t.Run("MidRestore", func(t *testing.T) {
		snap, err := a.admin.CreateSnapshot(t.Context(), ws.ID, cairn.SnapshotCreate{Name: "whole"})
		require.NoError(t, err)
		want := stacktest.RunInVolume(t, st.app, ws.VolumeName, treeSums)
		stacktest.RunInVolume(t, st.app, ws.VolumeName, "cd /mnt/cairn/ws && rm big1 big2 && echo new > mark && echo more > added")
		changed := stacktest.RunInVolume(t, st.app, ws.VolumeName, treeSums)

		done := make(chan error, 1)
		go func() { _, err := a.admin.RestoreSnapshot(context.Background(), ws.ID, snap.ID); done <- err }()
		require.Eventually(t, func() bool { return st.sidecars(t, "restore") > 0 }, time.Minute, 20*time.Millisecond,
			"the restore runs")
		require.NoError(t, a.cmd.Process.Kill())
		_ = a.cmd.Wait()
		require.Error(t, <-done)
		st.awaitNoSidecar(t, "restore")
		got := stacktest.RunInVolume(t, st.app, ws.VolumeName, treeSums)
		require.True(t, got == want || got == changed, "the volume holds one tree whole, not a mix:\n%s", got)
		t.Logf("after the kill the volume held the %s tree", map[bool]string{true: "restored", false: "old"}[got == want])

		a = st.start(top, shellServerOpts{maintainer: true})
		_, err = a.admin.RestoreSnapshot(t.Context(), ws.ID, snap.ID)
		require.NoError(t, err)
		require.Equal(t, want, stacktest.RunInVolume(t, st.app, ws.VolumeName, treeSums), "no trace of the killed restore")
	})
}

// rows runs a count query.
func rows(t *testing.T, db *pgx.Conn, query string) int {
	t.Helper()
	var n int
	require.NoError(t, db.QueryRow(t.Context(), query).Scan(&n))
	return n
}

// sidecars counts the stack's sidecar containers running command.
func (st *shellStack) sidecars(t testing.TB, command string) int {
	t.Helper()
	list, err := st.docker.ContainerList(context.Background(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", "cairn.app="+st.app), filters.Arg("label", "cairn.command="+command))})
	require.NoError(t, err)
	return len(list)
}

// awaitNoSidecar waits until the killed server's sidecar of command has
// ended on its own: its dialog ended with the server.
func (st *shellStack) awaitNoSidecar(t testing.TB, command string) {
	t.Helper()
	require.Eventually(t, func() bool { return st.runningSidecars(t, command) == 0 }, 2*time.Minute, 100*time.Millisecond,
		"the orphaned %s sidecar ends", command)
}

func (st *shellStack) runningSidecars(t testing.TB, command string) int {
	t.Helper()
	list, err := st.docker.ContainerList(context.Background(), container.ListOptions{
		Filters: filters.NewArgs(filters.Arg("label", "cairn.app="+st.app), filters.Arg("label", "cairn.command="+command))})
	require.NoError(t, err)
	return len(list)
}

// objects lists the bucket's keys under prefix.
func (st *shellStack) objects(t testing.TB, prefix string) []string {
	t.Helper()
	out, err := st.gw.Client().ListObjectsV2(context.Background(), &awss3.ListObjectsV2Input{Bucket: &st.bucket, Prefix: &prefix})
	require.NoError(t, err)
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, strings.Clone(*o.Key))
	}
	return keys
}
