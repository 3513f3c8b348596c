package sidecar

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// hugeEntries is the size of the directory the scale tests list.
const hugeEntries = 100_000

// shuffledNames returns n distinct names of varying length in a fixed
// random order, and the same names sorted.
func shuffledNames(n int) (shuffled, sorted []string) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, i := range rng.Perm(n) {
		shuffled = append(shuffled, "n"+strconv.FormatInt(int64(i)*7919, 36))
	}
	sorted = slices.Clone(shuffled)
	slices.Sort(sorted)
	return shuffled, sorted
}

// hugeDir makes a mount root holding the directory big of hugeEntries
// hard links, created in random order so that no filesystem hands them
// back sorted. It returns the root and big's path.
func hugeDir(tb testing.TB) (root, big string) {
	tb.Helper()
	root, err := filepath.EvalSymlinks(tb.TempDir())
	require.NoError(tb, err)
	big = filepath.Join(root, "big")
	require.NoError(tb, os.Mkdir(big, 0o755))
	names, _ := shuffledNames(hugeEntries)
	var src string
	for i, name := range names {
		if i%50_000 == 0 { // ext4 allows 65 000 links to one inode
			src = filepath.Join(root, "src"+strconv.Itoa(i))
			require.NoError(tb, os.WriteFile(src, []byte("x"), 0o644))
		}
		require.NoError(tb, syscall.Link(src, filepath.Join(big, name)))
	}
	return root, big
}

// TestNamePage keeps the limit+1 smallest names above after, whatever
// order they come in, so that a page of any directory fits in limit+1
// names.
func TestNamePage(t *testing.T) {
	t.Parallel()
	shuffled, sorted := shuffledNames(hugeEntries)
	descending := slices.Clone(sorted)
	slices.Reverse(descending)
	for _, tc := range []struct {
		name   string
		order  []string
		after  string
		limit  int
		want   []string
		more   bool
		offers int
	}{
		{name: "OKShuffled", order: shuffled, limit: 1000, want: sorted[:1000], more: true},
		{name: "OKDescending", order: descending, limit: 1000, want: sorted[:1000], more: true},
		{name: "OKAscending", order: sorted, limit: 1000, want: sorted[:1000], more: true},
		{name: "OKAfter", order: shuffled, after: sorted[49_999], limit: 7, want: sorted[50_000:50_007], more: true},
		{name: "OKLastPage", order: shuffled, after: sorted[hugeEntries-4], limit: 1000, want: sorted[hugeEntries-3:]},
		{name: "OKExactlyLimitLeft", order: descending, after: sorted[hugeEntries-11], limit: 10, want: sorted[hugeEntries-10:]},
		{name: "OKAfterPastEnd", order: shuffled, after: "z", limit: 5},
		{name: "OKOneEach", order: []string{"b", "a"}, limit: 1, want: []string{"a"}, more: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newPage(tc.after, tc.limit)
			for _, name := range tc.order {
				p.offer([]byte(name))
				if len(p.names) > tc.limit+1 {
					t.Fatalf("%d names kept for a page of %d", len(p.names), tc.limit)
				}
			}
			got, more := p.sorted()
			gotNames := make([]string, len(got))
			for i, n := range got {
				gotNames[i] = string(n.raw)
				require.Equal(t, n.raw, n.key, "a valid name is its own key")
			}
			if tc.want == nil {
				tc.want = []string{}
			}
			require.Equal(t, tc.want, gotNames)
			require.Equal(t, tc.more, more)
		})
	}
}

// TestNamePageAllocations: once full, a page allocates nothing per name
// offered, even when every name displaces one (a directory read in
// descending order). Not parallel: allocations are counted process-wide.
func TestNamePageAllocations(t *testing.T) {
	_, sorted := shuffledNames(hugeEntries)
	descending := make([][]byte, len(sorted))
	for i, name := range sorted {
		descending[len(sorted)-1-i] = []byte(name)
	}
	const limit = 1000
	allocs := testing.AllocsPerRun(3, func() {
		p := newPage("", limit)
		for _, name := range descending {
			p.offer(name)
		}
	})
	// Two per slot (the slot, its name's bytes), a few for the page, and
	// the odd slot whose buffer grows for a longer name.
	require.LessOrEqual(t, allocs, float64(3*(limit+1)), "allocations for %d names", hugeEntries)
}

// TestJSONForm orders names by what encoding/json writes of them.
func TestJSONForm(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"plain", "é日本", "\xff", "\xf6l", "a\xe9b", "\xe6\x97", "\xed\xa0\x80", "\xef\xbf\xbd", ""} {
		encoded, err := json.Marshal(raw)
		require.NoError(t, err)
		var decoded string
		require.NoError(t, json.Unmarshal(encoded, &decoded))
		require.Equal(t, decoded, string(jsonForm(nil, []byte(raw))), "%q", raw)
	}
}

// TestListHugeDirectory lists pages of 1 000 of a 100 000-entry directory:
// a page allocates for the page, not for the directory, and pages join up
// in byte order. Not parallel: allocations are counted process-wide, so
// nothing else may run meanwhile.
func TestListHugeDirectory(t *testing.T) {
	root, big := hugeDir(t)
	_, sorted := shuffledNames(hugeEntries)
	t.Run("OKAllocationsPerPage", func(t *testing.T) {
		b, f := newBrowser(root)
		require.Nil(t, f)
		defer b.close()
		allocs := testing.AllocsPerRun(2, func() {
			l, f := b.listPath(big, MaxListLimit, sorted[hugeEntries/2])
			if f != nil || len(l.entries) != MaxListLimit {
				t.Fatalf("listing failed: %v", f)
			}
		})
		// About two per name kept and four per entry described; one per
		// name read would be over 100 000.
		require.LessOrEqual(t, allocs, float64(10*MaxListLimit))
		t.Logf("%.0f allocations for a page of %d of %d entries", allocs, MaxListLimit, hugeEntries)
	})
	t.Run("OKPages", func(t *testing.T) {
		s := startServe(t, map[string]string{EnvMountRoot: root})
		for _, tc := range []struct {
			after string
			from  int
		}{
			{"", 0},
			{sorted[49_999], 50_000},
			{sorted[50_999], 51_000}, // the previous page's next_after
			{sorted[hugeEntries-MaxListLimit-1], hugeEntries - MaxListLimit},
		} {
			r := s.do(t, ls(big, MaxListLimit, tc.after))
			require.True(t, r.OK, deref(r.Error))
			require.Equal(t, sorted[tc.from:tc.from+MaxListLimit], names(r.Entries))
			if tc.from+MaxListLimit == hugeEntries {
				require.Empty(t, r.NextAfter, "the last page")
				continue
			}
			require.Equal(t, sorted[tc.from+MaxListLimit-1], r.NextAfter)
		}
	})
}

// BenchmarkListHugeDirectory lists one page of 1 000 of a directory of
// 100 000 entries: one pass over the directory and 1 000 entries described.
func BenchmarkListHugeDirectory(b *testing.B) {
	root, big := hugeDir(b)
	br, f := newBrowser(root)
	require.Nil(b, f)
	defer br.close()
	_, sorted := shuffledNames(hugeEntries)
	for _, bc := range []struct{ name, after string }{{"First", ""}, {"Middle", sorted[hugeEntries/2]}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, f := br.listPath(big, MaxListLimit, bc.after); f != nil {
					b.Fatal(f)
				}
			}
		})
	}
}
