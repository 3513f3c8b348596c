package sidecar

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPutProgress: asked for progress, a put reports the bytes it has
// sent as a Need line, answered by an empty Grant, while the PUT runs, and
// prints nothing after its result line; unasked, it prints only the
// result (TestPutSource).
func TestPutProgress(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	data := make([]byte, 3<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	v.write(t, "big", data, 0o644)
	// The store holds its answer until the report of every byte came:
	// the report cannot be missed, however fast the PUT is.
	reported := make(chan struct{})
	st := startStore(t, &store{answer: func(w http.ResponseWriter, _ *http.Request) {
		<-reported
		w.WriteHeader(http.StatusOK)
	}})
	vars := putVars(v, v.at("big"), st.url(), 1<<30)
	vars[EnvProgress] = "1"

	grants, toSidecar := io.Pipe()
	fromSidecar, out := io.Pipe()
	code := make(chan int, 1)
	go func() {
		code <- Main([]string{CommandPut}, env(vars), grants, out)
		_ = out.Close()
	}()
	var needs []Need
	lines := bufio.NewScanner(fromSidecar)
	var last string
	for lines.Scan() {
		last = lines.Text()
		var n Need
		if json.Unmarshal(lines.Bytes(), &n) != nil || n.Need == "" {
			continue
		}
		needs = append(needs, n)
		if n.Size == int64(len(data)) {
			select {
			case <-reported:
			default:
				close(reported)
			}
		}
		_, err := io.WriteString(toSidecar, "{}\n")
		require.NoError(t, err)
	}
	require.Equal(t, ExitOK, <-code)
	require.Equal(t, putLine(v.at("big"), data), last, "the result line comes last")
	require.NotEmpty(t, needs)
	for i, n := range needs {
		require.Equal(t, NeedProgress, n.Need)
		require.Equal(t, int64(len(data)), n.Total)
		require.Positive(t, n.Size)
		if i > 0 {
			require.Greater(t, n.Size, needs[i-1].Size, "each report moved on")
		}
	}
	require.Equal(t, int64(len(data)), needs[len(needs)-1].Size, "the last report counts every byte")
}
