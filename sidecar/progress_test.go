package sidecar

import (
	"bufio"
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
