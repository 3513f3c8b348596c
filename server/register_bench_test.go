package server_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// baselineCommit is the first cairn's server as this wave found it: its
// register copied the staging object to a final key.
const baselineCommit = "8e59e1b"

// BenchmarkRegisterSideBySide times the 1 KiB round trip a client makes —
// mint, PUT, register — against a server of today's source and one built
// from baselineCommit, both on the same Postgres and store, alternating
// round by round so that neither has the machine to itself. It prints the
// medians and their ratio (target ≤ 0.6: register moves no bytes now).
func BenchmarkRegisterSideBySide(b *testing.B) {
	now := stacktest.StartServer(b, stacktest.ServerOptions{})
	then := stacktest.StartServer(b, stacktest.ServerOptions{Binary: stacktest.BinaryAt(b, baselineCommit)})
	body := bytes.Repeat([]byte("cairn 1 KiB "), 1024/12+1)[:1024]
	sides := []*roundTrip{newRoundTrip(b, now, body), newRoundTrip(b, then, body)}

	const rounds = 200
	for i := range rounds {
		for _, rt := range sides {
			rt.once(b, i)
		}
	}
	b.ReportMetric(sides[0].median().Seconds()*1000, "now-ms")
	b.ReportMetric(sides[1].median().Seconds()*1000, "then-ms")
	b.ReportMetric(float64(sides[0].median())/float64(sides[1].median()), "now/then")
	for i, name := range []string{"now", "then"} {
		rt := sides[i]
		b.Logf("%s, %s: mint %.2f ms, PUT %.2f ms, register %.2f ms (medians)", stacktest.StoreKind(), name,
			ms(medianOf(rt.mints)), ms(medianOf(rt.puts)), ms(medianOf(rt.registers)))
	}
}

func ms(d time.Duration) float64 { return d.Seconds() * 1000 }

// roundTrip is one server's side of the benchmark.
type roundTrip struct {
	c     *client.Client
	ws    string
	body  []byte
	sum   string
	times []time.Duration
	// the three steps of each round trip
	mints, puts, registers []time.Duration
}

func newRoundTrip(b *testing.B, s *stacktest.Server, body []byte) *roundTrip {
	c, err := client.New(s.URL, client.WithToken(s.Token))
	must(b, err)
	ws, err := c.CreateWorkspace(context.Background(), cairn.WorkspaceCreate{Name: "bench"})
	must(b, err)
	d := sha256.Sum256(body)
	return &roundTrip{c: c, ws: ws.ID, body: body, sum: base64.StdEncoding.EncodeToString(d[:])}
}

func (rt *roundTrip) once(b *testing.B, i int) {
	ctx := context.Background()
	start := time.Now()
	st, err := rt.c.MintStaging(ctx, rt.ws, cairn.StagingRequest{Size: int64(len(rt.body)), SHA256B64: rt.sum})
	must(b, err)
	minted := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, st.PutURL, bytes.NewReader(rt.body))
	must(b, err)
	req.Header.Set("x-amz-checksum-sha256", rt.sum)
	resp, err := http.DefaultClient.Do(req)
	must(b, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("PUT answered %d", resp.StatusCode)
	}
	put := time.Now()
	_, err = rt.c.RegisterArtifact(ctx, rt.ws, cairn.ArtifactCreate{StagingKey: st.Key, Name: fmt.Sprintf("a%d", i)})
	must(b, err)
	end := time.Now()
	rt.times = append(rt.times, end.Sub(start))
	rt.mints, rt.puts, rt.registers = append(rt.mints, minted.Sub(start)), append(rt.puts, put.Sub(minted)),
		append(rt.registers, end.Sub(put))
}

func (rt *roundTrip) median() time.Duration { return medianOf(rt.times) }

func medianOf(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
