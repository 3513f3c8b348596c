package palette

import (
	"strings"

	"github.com/sahilm/fuzzy"

	"github.com/cairn-dev/cairn/internal/termkit"
)

// Candidate is one completion of an argument: the value that goes into
// the line and a dim note of what it is ("workspace", "artifact in
// ws-alpha"). Both may be untrusted names: the palette shows them
// sanitised.
type Candidate struct {
	Value, Detail string
}

// Source gives the candidates of a command's argument (argIndex 0 is the
// first); nil or empty when that argument has none to offer. The palette
// asks once per (command, argIndex) per opening, when the operator starts
// typing that argument, and keeps the answer.
type Source func(command string, argIndex int) []Candidate

// set is one list of candidates prepared for matching: the sanitised text
// the operator sees and the fuzzy matcher reads (so matched byte offsets
// are offsets into what is drawn), the sanitised notes, and the raw value
// of each entry whose text had to be escaped.
type set struct {
	text   []string
	detail []string
	raw    map[int]string
	index  map[string]int // text → entry, built on first need
	// folded is each text with ASCII letters lower-cased, or "" for a
	// text with other bytes (a rune like the Kelvin sign folds to k):
	// the quick subsequence test that spares most entries a fuzzy score.
	folded []string
}

// newSet prepares cands once; a clean name is kept as it is, uncopied.
func newSet(cands []Candidate) *set {
	s := &set{text: make([]string, len(cands)), detail: make([]string, len(cands)), folded: make([]string, len(cands))}
	for i, c := range cands {
		s.text[i] = clean(c.Value)
		s.detail[i] = clean(c.Detail)
		s.folded[i] = fold(s.text[i])
		if s.text[i] != c.Value {
			if s.raw == nil {
				s.raw = make(map[int]string)
			}
			s.raw[i] = c.Value
		}
	}
	return s
}

// commandSet is the command table as candidates.
func commandSet() *set {
	s := &set{text: make([]string, len(commands)), detail: make([]string, len(commands))}
	s.folded = make([]string, len(commands))
	for i, c := range commands {
		s.text[i], s.detail[i], s.folded[i] = c.Name, c.Help, c.Name
	}
	return s
}

// fold lower-cases the ASCII letters of s; "" when s has other bytes
// than ASCII. A lower-case s is returned uncopied.
func fold(s string) string {
	lower := true
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 0x80:
			return ""
		case 'A' <= c && c <= 'Z':
			lower = false
		}
	}
	if lower {
		return s
	}
	return strings.ToLower(s)
}

// may reports entry e can match the folded query q: false only when e
// is ASCII and lacks q as a subsequence, which no fuzzy match can.
func (s *set) may(e int, q string) bool {
	t := s.folded[e]
	if t == "" || q == "" {
		return true
	}
	j := 0
	for i := 0; i < len(t) && j < len(q); i++ {
		if t[i] == q[j] {
			j++
		}
	}
	return j == len(q)
}

// clean is termkit.Sanitize with a fast path for printable ASCII.
func clean(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return termkit.Sanitize(s)
		}
	}
	return s
}

// lookup finds the entry whose shown text is t.
func (s *set) lookup(t string) (int, bool) {
	if s.index == nil {
		s.index = make(map[string]int, len(s.text))
		for i := len(s.text) - 1; i >= 0; i-- { // the first of equal texts wins
			s.index[s.text[i]] = i
		}
	}
	i, ok := s.index[t]
	return i, ok
}

// value is what an argument typed as t stands for: the raw value of the
// candidate shown as t, or t itself.
func (s *set) value(t string) string {
	if i, ok := s.lookup(t); ok {
		if v, esc := s.raw[i]; esc {
			return v
		}
	}
	return t
}

// view is the fuzzy.Source over entries lo..hi of a list of set entries
// (idx, or every entry when idx is nil), in set order, so no string is
// copied per key.
type view struct {
	s      *set
	idx    []int
	lo, hi int
}

func (v view) String(i int) string { return v.s.text[v.entry(i)] }

func (v view) Len() int { return v.hi - v.lo }

func (v view) entry(i int) int {
	if v.idx == nil {
		return v.lo + i
	}
	return v.idx[v.lo+i]
}

// hit is one suggestion: a set entry and the byte offsets of its text the
// query matched.
type hit struct {
	entry int
	score int
	at    []int
}

// step is one query's ranking, kept while later queries extend it.
type step struct {
	query   string
	n       int
	matched []int // every entry that matches, in set order
	top     []hit
}

// matcher ranks one set against the query as it is typed. It keeps the
// ranking of each prefix of the query: a key that extends the query
// searches only the last one's matches (a fuzzy match of "abc" is a
// match of "ab"), and backspace finds its ranking kept.
type matcher struct {
	s     *set
	steps []step
}

// maxSteps bounds the prefixes kept.
const maxSteps = 64

// chunk is how many entries one fuzzy call reads: the matches of a chunk
// are folded into the ranking at once, so no slice of 10 000 matches
// grows.
const chunk = 1024

// rank returns the best n hits for query, best first, ties in set order,
// and how many entries match in all. An empty query matches every entry,
// in set order, with nothing emphasised.
func (m *matcher) rank(query string, n int) ([]hit, int) {
	if query == "" {
		m.steps = m.steps[:0]
		out := make([]hit, min(n, len(m.s.text)))
		for i := range out {
			out[i] = hit{entry: i}
		}
		return out, len(m.s.text)
	}
	for len(m.steps) > 0 && !strings.HasPrefix(query, m.steps[len(m.steps)-1].query) {
		m.steps = m.steps[:len(m.steps)-1]
	}
	v := view{s: m.s, hi: len(m.s.text)}
	if k := len(m.steps); k > 0 {
		last := m.steps[k-1]
		if last.query == query && last.n == n {
			return last.top, len(last.matched)
		}
		v = view{s: m.s, idx: last.matched, hi: len(last.matched)}
	}
	st := search(query, v, n)
	if len(m.steps) == maxSteps {
		m.steps = append(m.steps[:0], m.steps[1:]...)
	}
	m.steps = append(m.steps, st)
	return st.top, len(st.matched)
}

// search ranks the entries of v against query: those that pass the
// quick test, a chunk at a time.
func search(query string, v view, n int) step {
	st := step{query: query, n: n, matched: []int{}, top: make([]hit, 0, n+1)}
	q := fold(query)
	buf := make([]int, 0, chunk)
	for i := 0; i < v.Len(); i++ {
		if e := v.entry(i); v.s.may(e, q) {
			buf = append(buf, e)
		}
		if len(buf) == chunk || i == v.Len()-1 {
			st.score(query, view{s: v.s, idx: buf, hi: len(buf)}, n)
			buf = buf[:0]
		}
	}
	return st
}

// score folds the fuzzy matches of the entries of c into the step.
func (st *step) score(query string, c view, n int) {
	for _, f := range fuzzy.FindFromNoSort(query, c) {
		e := c.entry(f.Index)
		st.matched = append(st.matched, e)
		st.top = keep(st.top, hit{entry: e, score: f.Score, at: f.MatchedIndexes}, n)
	}
}

// keep adds h to top, the best n so far by score: h comes after every
// hit already kept, so it goes after those of its score (a stable
// partial sort).
func keep(top []hit, h hit, n int) []hit {
	pos := len(top)
	for pos > 0 && top[pos-1].score < h.score {
		pos--
	}
	if pos >= n {
		return top
	}
	top = append(top, hit{})
	copy(top[pos+1:], top[pos:])
	top[pos] = h
	return top[:min(len(top), n)]
}
