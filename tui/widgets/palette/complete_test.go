package palette

import (
	"fmt"
	"testing"

	"github.com/sahilm/fuzzy"
	"github.com/stretchr/testify/require"
)

// reference is the plain ranking: fuzzy.FindFrom over every text (a
// stable sort, so ties keep set order), the best n.
func reference(s *set, query string, n int) ([]int, int) {
	found := fuzzy.FindFrom(query, view{s: s, hi: len(s.text)})
	var top []int
	for _, f := range found[:min(n, len(found))] {
		top = append(top, f.Index)
	}
	return top, len(found)
}

func entries(hits []hit) []int {
	var out []int
	for _, h := range hits {
		out = append(out, h.entry)
	}
	return out
}

// TestRankMatchesAFullSearch types queries key by key, with backspaces
// and a jump, and checks each ranking against a fresh full search: the
// narrowing, the kept prefixes and the quick test change nothing.
func TestRankMatchesAFullSearch(t *testing.T) {
	t.Parallel()
	var cands []Candidate
	for i := range 3000 {
		cands = append(cands, Candidate{Value: fmt.Sprintf("ws-%02d/Report_%04d.CSV", i%40, i*7%3000)})
	}
	cands = append(cands, Candidate{Value: "\u212aelvin_report"}, Candidate{Value: "ws-\x1b[2Jrep"}, Candidate{Value: "ſtrange"})
	s := newSet(cands)
	m := &matcher{s: s}
	var typed []string
	for _, q := range []string{"rep", "rePo", "repo1", "r", "", "k", "ke", "s", "st", "ws-1/", "ws-1/csv", "^[[", "0", "07"} {
		for i := 1; i <= len(q); i++ {
			typed = append(typed, q[:i])
		}
		typed = append(typed, q[:max(0, len(q)-1)]) // a backspace
	}
	for _, q := range typed {
		hits, total := m.rank(q, 10)
		if q == "" {
			require.Equal(t, len(s.text), total)
			continue
		}
		want, wantTotal := reference(s, q, 10)
		require.Equal(t, wantTotal, total, q)
		require.Equal(t, want, entries(hits), q)
	}
}

func TestQuickTestKeepsFoldedRunes(t *testing.T) {
	t.Parallel()
	s := newSet([]Candidate{{Value: "\u212aelvin"}, {Value: "ABC"}, {Value: "xyz"}})
	require.True(t, s.may(0, "k"), "a non-ASCII text always goes to fuzzy")
	require.True(t, s.may(1, fold("aC")))
	require.False(t, s.may(2, "a"))
}

func TestLocate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line string
		want slot
		ok   bool
	}{
		{line: "", want: slot{}, ok: true},
		{line: "  w", want: slot{query: "w", start: 2}, ok: true},
		{line: "ws ", want: slot{cmd: "ws", start: 3}, ok: true},
		{line: "ws  al", want: slot{cmd: "ws", query: "al", start: 4}, ok: true},
		{line: "ws al ", ok: false},
		{line: "files ws-a my d", want: slot{cmd: "files", arg: 1, query: "my d", start: 11}, ok: true},
		{line: "shells ", ok: false},
		{line: "nope x", ok: false},
	} {
		got, ok := locate(tc.line)
		require.Equal(t, tc.ok, ok, tc.line)
		if ok {
			require.Equal(t, tc.want, got, tc.line)
		}
	}
}
