package sidecar

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// reportingRun runs one command asked for progress (CAIRN_PROGRESS=1): it
// answers each Need line with an empty Grant after handing it to seen, and
// returns the Needs, the last line printed (the result) and the exit code.
func reportingRun(t *testing.T, command string, vars map[string]string, seen func(Need)) ([]Need, string, int) {
	t.Helper()
	vars[EnvProgress] = "1"
	grants, toSidecar := io.Pipe()
	fromSidecar, out := io.Pipe()
	code := make(chan int, 1)
	go func() {
		code <- Main([]string{command}, env(vars), grants, out)
		_ = out.Close()
	}()
	var needs []Need
	var last string
	lines := bufio.NewScanner(fromSidecar)
	for lines.Scan() {
		last = lines.Text()
		var n Need
		if json.Unmarshal(lines.Bytes(), &n) != nil || n.Need == "" {
			continue
		}
		needs = append(needs, n)
		seen(n)
		_, err := io.WriteString(toSidecar, "{}\n")
		require.NoError(t, err)
	}
	return needs, last, <-code
}

// requireProgress checks reports of a transfer of total bytes: each a
// progress Need, each further than the one before, the last at total.
func requireProgress(t *testing.T, needs []Need, total int64) {
	t.Helper()
	require.NotEmpty(t, needs)
	for i, n := range needs {
		require.Equal(t, NeedProgress, n.Need)
		require.Equal(t, total, n.Total)
		require.Positive(t, n.Size)
		if i > 0 {
			require.Greater(t, n.Size, needs[i-1].Size, "each report moved on")
		}
	}
	require.Equal(t, total, needs[len(needs)-1].Size, "the last report counts every byte")
}

// closeOnce closes ch the first time cond holds for a Need.
func closeOnce(ch chan struct{}, cond func(Need) bool) func(Need) {
	var once sync.Once
	return func(n Need) {
		if cond(n) {
			once.Do(func() { close(ch) })
		}
	}
}

// TestPutProgress: asked for progress, a put reports the bytes it has
// sent while the PUT runs and prints nothing after its result line;
// unasked, it prints only the result (TestPutSource).
func TestPutProgress(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	data := make([]byte, 3<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	v.write(t, "big", data, 0o644)
	// The store holds its answer until the report of every byte came: the
	// report cannot be missed, however fast the PUT is.
	reported := make(chan struct{})
	st := startStore(t, &store{answer: func(w http.ResponseWriter, _ *http.Request) {
		<-reported
		w.WriteHeader(http.StatusOK)
	}})
	needs, last, code := reportingRun(t, CommandPut, putVars(v, v.at("big"), st.url(), 1<<30),
		closeOnce(reported, func(n Need) bool { return n.Size == int64(len(data)) }))
	require.Equal(t, ExitOK, code)
	require.Equal(t, putLine(v.at("big"), data), last, "the result line comes last")
	requireProgress(t, needs, int64(len(data)))
}

// TestDownloadProgress: asked for progress, a download reports the bytes
// it has written while the GET runs, out of the object's length.
func TestDownloadProgress(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	half := len(objectData) / 2
	// The store sends half the object, then the rest only once that half
	// was reported.
	reported := make(chan struct{})
	st := startStore(t, &store{answer: func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(objectData)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(objectData[:half])
		w.(http.Flusher).Flush()
		<-reported
		_, _ = w.Write(objectData[half:])
	}})
	vars := map[string]string{EnvMountRoot: v.ws, EnvTargetPath: v.at("new.bin"), EnvURL: st.url()}
	needs, last, code := reportingRun(t, CommandDownload, vars,
		closeOnce(reported, func(n Need) bool { return n.Size >= int64(half) }))
	require.Equal(t, ExitOK, code)
	require.Equal(t, downloadedLine(v.at("new.bin"), len(objectData)), last)
	require.Equal(t, objectData, readFile(t, v.at("new.bin")))
	requireProgress(t, needs, int64(len(objectData)))
	require.GreaterOrEqual(t, len(needs), 2, "a report before the end, and the end")
}

// TestPackProgress: asked for progress, a pack reports the archive's bytes
// as it makes them (the total unknown), in turn with its upload Needs, the
// last report at the archive's size; unasked, it reports nothing.
func TestPackProgress(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	v.mkdir(t, "src")
	noise := make([]byte, 20<<20)
	_, _ = rand.Read(noise)
	v.write(t, "src/noise", noise, 0o644)
	for _, asked := range []bool{false, true} {
		b := startBucket(t)
		vars := packVars(v, v.at("src"), FormatTarGz)
		if asked {
			vars[EnvProgress] = "1"
		}
		p := runPack(t, vars, b, grantFor(b))
		require.Equal(t, ExitOK, p.code, p.line)
		require.Len(t, p.needs, 2, "two parts of 16 MiB at most")
		if !asked {
			require.Empty(t, p.reports)
			continue
		}
		require.NotEmpty(t, p.reports)
		for i, n := range p.reports {
			require.Equal(t, NeedProgress, n.Need)
			require.Zero(t, n.Total, "a pack does not know its archive's size ahead")
			if i > 0 {
				require.Greater(t, n.Size, p.reports[i-1].Size)
			}
		}
		require.Equal(t, int64(len(p.archive)), p.reports[len(p.reports)-1].Size, "the last report is the whole archive")

		// Its unpack reports the archive's bytes fetched, out of its size.
		st := startStore(t, &store{status: http.StatusOK, body: p.archive})
		vars = unpackVars(v, st.url(), v.at("out"), FormatTarGz)
		vars[EnvMaxSize] = strconv.Itoa(len(p.archive))
		needs, last, code := reportingRun(t, CommandUnpack, vars, func(Need) {})
		require.Equal(t, ExitOK, code, last)
		requireProgress(t, needs, int64(len(p.archive)))
		require.Equal(t, noise, readFile(t, v.at("out/noise")))
	}
}

// TestSnapshotRestoreProgress: asked for progress, a snapshot reports the
// bytes it reads (to hash, then to upload; total unknown), and a restore
// the bytes of files it writes out of the manifest's total; each run's
// last report is its whole count.
func TestSnapshotRestoreProgress(t *testing.T) {
	t.Parallel()
	v := fastVolume(t)
	richTree(t, v)
	c := newCASServer(t)
	vars := snapVars()
	vars[EnvProgress] = "1"
	res, got := snap(t, c, v, vars)
	require.Equal(t, ExitOK, got.code, got.line)
	reports := needsOf(got.needs, NeedProgress)
	require.NotEmpty(t, reports)
	for i, n := range reports {
		require.Zero(t, n.Total)
		if i > 0 {
			require.Greater(t, n.Size, reports[i-1].Size)
		}
	}
	// Every file read to hash it, and what was uploaded read once more.
	require.Equal(t, *res.Size+res.UploadedBytes, reports[len(reports)-1].Size)

	w := fastVolume(t)
	rvars := restoreVars(c, w, res.SHA256B64)
	rvars[EnvProgress] = "1"
	back, rgot := restore(t, c, rvars)
	require.Equal(t, ExitOK, rgot.code, rgot.line)
	reports = needsOf(rgot.needs, NeedProgress)
	require.NotEmpty(t, reports)
	for _, n := range reports {
		require.Equal(t, *back.Size, n.Total)
	}
	require.Equal(t, *back.Size, reports[len(reports)-1].Size, "every byte of every file written")
}
