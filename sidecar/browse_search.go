package sidecar

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"path"
	"regexp"
	"slices"
	"syscall"
	"time"
	"unicode/utf8"
)

// Defaults and inner bounds of search and tree.
const (
	defaultSearchLimit = 100
	defaultTreeDepth   = 3
	defaultTreeLimit   = 1000
	// maxSearchDepth bounds how deep a search descends, and so the
	// directory descriptors it holds open at once: one per level.
	maxSearchDepth = 64
	// maxSearchLine is the line buffer of a content search: a longer line
	// is matched on its first maxSearchLine bytes, the rest skipped.
	maxSearchLine = 64 << 10
	// binarySniff is how much of a file is looked at for a NUL byte, which
	// marks it binary and skips it, as grep -I does.
	binarySniff = 8 << 10
	// linesPerClock is how many lines a content search reads between two
	// looks at the clock.
	linesPerClock = 1024
)

// The bounds a search or tree can stop at (BrowseReply.Stopped).
const (
	stoppedResults = "results"
	stoppedEntries = "entries"
	stoppedBytes   = "bytes"
	stoppedTime    = "time"
)

// walkBounds are the protocol's bounds of one search or tree, held in a
// variable so that a test can lower them within its reach.
var walkBounds = struct {
	entries        int64
	bytes          int64
	time           time.Duration
	treeReplyBytes int
}{MaxSearchEntries, MaxSearchBytes, MaxSearchTime, MaxTreeReplyBytes}

func (b *browser) search(req BrowseRequest) BrowseReply {
	s, f := newSearch(req)
	if f != nil {
		return refusal(f)
	}
	w := b.newBrowseWalk(maxSearchDepth, s.visit)
	s.deadline = w.deadline
	clean, f := b.walkPath(req.Path, w)
	if f != nil {
		return refusal(f)
	}
	return BrowseReply{OK: true, Path: clean, Matches: s.matches, Stopped: w.stopped, Scanned: w.scanned}
}

func (b *browser) tree(req BrowseRequest) BrowseReply {
	depth := cmp.Or(req.Depth, defaultTreeDepth)
	if depth < 1 || depth > MaxTreeDepth {
		return refusal(fail(ReasonEnvInvalid, "depth %d is out of bounds: 1 to %d, or 0 for %d", req.Depth, MaxTreeDepth, defaultTreeDepth))
	}
	limit, f := requestLimit(req.Limit, defaultTreeLimit, MaxTreeEntries)
	if f != nil {
		return refusal(f)
	}
	t := &treeList{limit: limit}
	w := b.newBrowseWalk(depth, t.visit)
	clean, f := b.walkPath(req.Path, w)
	if f != nil {
		return refusal(f)
	}
	return BrowseReply{OK: true, Path: clean, Tree: t.entries, Stopped: w.stopped, Scanned: w.scanned}
}

// requestLimit is a request's limit, def for 0, refused outside 1 … most.
func requestLimit(asked, def, most int) (int, *failure) {
	limit := cmp.Or(asked, def)
	if limit < 1 || limit > most {
		return 0, fail(ReasonEnvInvalid, "limit %d is out of bounds: 1 to %d, or 0 for %d", asked, most, def)
	}
	return limit, nil
}

// browseWalk visits what lies below a path depth-first, each directory's
// names in byte order, describing every entry without following it: a
// symlink is visited, never descended into, and every directory is opened
// from its parent's descriptor with O_NOFOLLOW. It holds one descriptor
// per level.
type browseWalk struct {
	b        *browser
	maxDepth int // levels below the path; 1 is a directory's own entries
	deadline time.Time
	scanned  int64  // names read, at most walkBounds.entries
	stopped  string // the bound that ended the walk
	// visit is told of each entry and its volume path; a bound it names
	// ends the walk.
	visit func(dirfd int, p string, e Entry) (stop string)
}

func (b *browser) newBrowseWalk(maxDepth int, visit func(int, string, Entry) string) *browseWalk {
	return &browseWalk{b: b, maxDepth: maxDepth, deadline: time.Now().Add(walkBounds.time), visit: visit}
}

// walkPath walks the directory at p, or visits p itself when it is anything
// else (a symlink to a directory included), and returns p cleaned. Only a
// path that cannot be walked at all is refused; what cannot be read below
// it is skipped.
func (b *browser) walkPath(p string, w *browseWalk) (string, *failure) {
	l, f := b.locate(p)
	if f != nil {
		return "", f
	}
	dirfd, name, f := b.openParent(l)
	if f != nil {
		return "", f
	}
	defer syscall.Close(dirfd)
	fd, err := openDirNoFollow(dirfd, name)
	switch {
	case err == nil:
		defer syscall.Close(fd)
		if err := w.dir(fd, l.clean, 1); err != nil {
			return "", pathUnreadable(l.asked, err)
		}
		return l.clean, nil
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.ELOOP):
		e, err := b.inspect(dirfd, name)
		if err != nil {
			return "", lastFailure(l.asked, err)
		}
		w.scanned = 1
		w.stop(w.visit(dirfd, l.clean, e))
		return l.clean, nil
	}
	return "", lastFailure(l.asked, err)
}

// stop records the first bound met, and says whether the walk is over.
func (w *browseWalk) stop(bound string) bool {
	if w.stopped == "" {
		w.stopped = bound
	}
	return w.stopped != ""
}

// dir visits the entries of the directory fd, at volume path p, level
// levels below the walked path.
func (w *browseWalk) dir(fd int, p string, level int) error {
	names, more, err := w.names(fd)
	if err != nil {
		return err
	}
	for _, name := range names {
		if w.stopped != "" {
			return nil
		}
		w.step(fd, path.Join(p, name), name, level)
	}
	if more {
		w.stop(stoppedEntries)
	}
	return nil
}

// names reads the names of the directory fd in byte order, each counted
// as scanned; once the entries bound is met it keeps no more, and says
// more remain.
func (w *browseWalk) names(fd int) (names []string, more bool, err error) {
	err = readNames(fd, w.b.direntBuffer(), func(name []byte) {
		if w.scanned >= walkBounds.entries {
			more = true
			return
		}
		w.scanned++
		names = append(names, string(name))
	})
	slices.Sort(names)
	return names, more, err
}

// step visits one entry of dirfd and descends into it when it is a
// directory within the depth bound.
func (w *browseWalk) step(dirfd int, p, name string, level int) {
	if !time.Now().Before(w.deadline) {
		w.stop(stoppedTime)
		return
	}
	e, err := w.b.inspect(dirfd, name)
	if err != nil {
		return // gone since the directory was read
	}
	if w.stop(w.visit(dirfd, p, e)) || e.Type != TypeDir || level >= w.maxDepth {
		return
	}
	fd, err := openDirNoFollow(dirfd, name)
	if err != nil {
		return // unreadable, or no longer a directory: skipped
	}
	defer syscall.Close(fd)
	w.dir(fd, p, level+1) //nolint:errcheck // an unreadable directory below the path is skipped
}

// direntBuffer is the browser's one getdents batch, made on first use.
func (b *browser) direntBuffer() []byte {
	if b.dirents == nil {
		b.dirents = make([]byte, direntBatch)
	}
	return b.dirents
}

// treeList gathers a tree's entries up to its limit, and holds their
// encoded size under walkBounds.treeReplyBytes, which keeps the reply line
// well under MaxReplyLine whatever names need escaping.
type treeList struct {
	limit   int
	size    int
	entries []TreeEntry
}

func (t *treeList) visit(_ int, p string, e Entry) string {
	entry := TreeEntry{Path: p, Entry: e}
	encoded, _ := json.Marshal(entry) // a TreeEntry always encodes
	if len(t.entries) == t.limit || t.size+len(encoded)+1 > walkBounds.treeReplyBytes {
		return stoppedResults
	}
	t.entries = append(t.entries, entry)
	t.size += len(encoded) + 1 // and its comma
	return ""
}

// fileSearch is one search in progress: what it looks for, and what it
// has found and read.
type fileSearch struct {
	glob      string
	content   *regexp.Regexp // nil: names only
	limit     int
	deadline  time.Time
	bytesLeft int64
	lines     *bufio.Reader // reused for every file
	matches   []Match
}

// newSearch checks a search request. Go's regexp is RE2: matching takes
// time linear in the input, whatever the expression, so no expression can
// stall the walk; its size is bounded by MaxPatternBytes.
func newSearch(req BrowseRequest) (*fileSearch, *failure) {
	limit, f := requestLimit(req.Limit, defaultSearchLimit, MaxSearchResults)
	if f != nil {
		return nil, f
	}
	switch {
	case req.Glob == "" && req.Content == "":
		return nil, fail(ReasonEnvInvalid, "a search needs a glob, a content expression, or both")
	case len(req.Glob) > MaxPatternBytes || len(req.Content) > MaxPatternBytes:
		return nil, fail(ReasonEnvInvalid, "a search pattern is over the %d-byte bound", MaxPatternBytes)
	}
	if _, err := path.Match(req.Glob, ""); err != nil {
		return nil, fail(ReasonEnvInvalid, "glob %q is malformed: %v", req.Glob, err)
	}
	s := &fileSearch{glob: req.Glob, limit: limit, bytesLeft: walkBounds.bytes}
	if req.Content == "" {
		return s, nil
	}
	re, err := regexp.Compile(req.Content)
	if err != nil {
		return nil, fail(ReasonEnvInvalid, "content %q is not an RE2 expression: %v", req.Content, err)
	}
	s.content, s.lines = re, bufio.NewReaderSize(nil, maxSearchLine)
	return s, nil
}

func (s *fileSearch) visit(dirfd int, p string, e Entry) string {
	if s.glob != "" {
		if ok, _ := path.Match(s.glob, e.Name); !ok { // checked well-formed
			return ""
		}
	}
	switch {
	case s.content == nil:
		return s.add(Match{Path: p})
	case e.Type == TypeFile:
		return s.grep(dirfd, p, e.Name)
	}
	return ""
}

// add keeps m, or stops the search at a result past the limit, so that
// "results" means more were there.
func (s *fileSearch) add(m Match) string {
	if len(s.matches) == s.limit {
		return stoppedResults
	}
	s.matches = append(s.matches, m)
	return ""
}

// grep matches the lines of the regular file name in dirfd. It opens
// only what was described as a file, and the descriptor's own fstat
// decides, so a file swapped in meanwhile is judged too (O_NONBLOCK: a
// FIFO does not wait for a writer). What cannot be opened is skipped.
func (s *fileSearch) grep(dirfd int, p, name string) string {
	fd, err := openatRetry(dirfd, name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC)
	if err != nil {
		return ""
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || entryType(st.Mode) != TypeFile {
		return ""
	}
	budget := &io.LimitedReader{R: fdReader(fd), N: s.bytesLeft}
	s.lines.Reset(budget)
	stop := s.grepText(p)
	read := s.bytesLeft - budget.N
	s.bytesLeft = budget.N
	if stop == "" && budget.N == 0 && st.Size > read {
		return stoppedBytes // the budget ended before the file did
	}
	return stop
}

// grepText matches each line of s.lines, unless its start holds a NUL.
func (s *fileSearch) grepText(p string) string {
	head, _ := s.lines.Peek(binarySniff) // as much as there is
	if bytes.IndexByte(head, 0) >= 0 {
		return ""
	}
	line, midLine := 0, false
	for n := 1; ; n++ {
		chunk, err := s.lines.ReadSlice('\n')
		if len(chunk) > 0 && !midLine {
			line++
			if stop := s.matchLine(p, line, chunk); stop != "" {
				return stop
			}
		}
		// A line over the buffer comes in chunks: only its first is matched.
		midLine = errors.Is(err, bufio.ErrBufferFull)
		if err != nil && !midLine {
			return "" // the end, or a read error: the rest is skipped
		}
		if n%linesPerClock == 0 && !time.Now().Before(s.deadline) {
			return stoppedTime
		}
	}
}

func (s *fileSearch) matchLine(p string, n int, line []byte) string {
	line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	if !s.content.Match(line) {
		return ""
	}
	return s.add(Match{Path: p, Line: n, Text: matchText(line)})
}

// matchText is a line as a match reports it: cut at MaxMatchText bytes,
// never inside a character, and valid UTF-8, each invalid byte as U+FFFD.
func matchText(line []byte) string {
	text := bytes.ToValidUTF8(runeCut(line, MaxMatchText), []byte("\uFFFD"))
	return string(runeCut(text, MaxMatchText))
}

// runeCut is b cut to at most n bytes, at the start of the character the
// cut would split; where no character starts near n (invalid bytes), at n.
func runeCut(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	for i := n; i > 0 && i > n-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			return b[:i]
		}
	}
	return b[:n]
}

// fdReader reads a descriptor, again when a signal interrupted the read;
// whoever opened it closes it.
type fdReader int

func (fd fdReader) Read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(int(fd), p)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}
