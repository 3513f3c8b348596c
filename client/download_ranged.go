package client

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
)

// DefaultRangedAbove is the artifact size above which Download fetches
// ranges in parallel, resumably.
const DefaultRangedAbove = 64 << 20

// rangeSize is one range of a ranged download: at most what an
// interruption costs, per range in flight.
const rangeSize = 16 << 20

// urlRefresh is how old a presigned GET may get before a ranged download
// asks for a fresh one: well within the server's default maximum TTL.
const urlRefresh = 5 * time.Minute

// rangesFile is the sidecar beside a ranged download's part file.
func rangesFile(part string) string { return part + ".json" }

// rangeState is the sidecar: which content the part file holds ranges of,
// and which ranges are complete.
type rangeState struct {
	Version    int      `json:"version"`
	ArtifactID string   `json:"artifact_id"`
	ObjectKey  string   `json:"object_key"`
	Size       int64    `json:"size"`
	SHA256B64  string   `json:"sha256_b64,omitempty"`
	RangeSize  int64    `json:"range_size"`
	Done       [][2]int `json:"done"` // runs of complete ranges: [first, end)
}

// newRangeState is the sidecar of a fresh download of a.
func newRangeState(a *cairn.Artifact, size int64) *rangeState {
	return &rangeState{Version: stateVersion, ArtifactID: a.ID, ObjectKey: a.ObjectKey, Size: a.Size,
		SHA256B64: digestOf(a), RangeSize: cmp.Or(size, rangeSize)}
}

func digestOf(a *cairn.Artifact) string {
	if a.SHA256B64 == nil {
		return ""
	}
	return *a.SHA256B64
}

// same reports whether s describes the download of a's current content.
func (s *rangeState) same(a *cairn.Artifact) bool {
	return s.Version == stateVersion && s.ArtifactID == a.ID && s.ObjectKey == a.ObjectKey && s.Size == a.Size &&
		s.SHA256B64 == digestOf(a) && s.RangeSize > 0
}

// complete is the sidecar's runs as one flag per range; runs out of
// bounds are ignored.
func (s *rangeState) complete(count int) []bool {
	done := make([]bool, count)
	for _, run := range s.Done {
		for i := max(run[0], 0); i < min(run[1], count); i++ {
			done[i] = true
		}
	}
	return done
}

// setRuns records done as runs.
func (s *rangeState) setRuns(done []bool) {
	s.Done = s.Done[:0]
	for i := 0; i < len(done); i++ {
		if !done[i] {
			continue
		}
		start := i
		for i < len(done) && done[i] {
			i++
		}
		s.Done = append(s.Done, [2]int{start, i})
	}
}

// readRanges reads the sidecar of part; nil when there is none or it
// does not parse.
func readRanges(part string) *rangeState {
	data, err := os.ReadFile(rangesFile(part))
	if err != nil {
		return nil
	}
	var s rangeState
	if json.Unmarshal(data, &s) != nil {
		return nil
	}
	return &s
}

// rangedDownload is one run of a ranged download into its part file.
type rangedDownload struct {
	c     *Client
	a     *cairn.Artifact
	ttl   time.Duration
	f     *os.File // the part file, read and written at offsets
	part  string
	count int // ranges

	mu    sync.Mutex // guards what follows
	state *rangeState
	done  []bool
	url   string
	urlAt time.Time
}

// downloadRanged is Download of a large artifact: it resumes the part file
// an earlier run left when its sidecar names the same content, fetches the
// missing ranges o.Parallel at once, hashes the file in order as its
// prefix completes, and places it once verified. An interruption or a
// failed range keeps both files for the next run; a mismatch removes them.
func (c *Client) downloadRanged(ctx context.Context, d *cairn.ArtifactDetail, part, dest string, o DownloadOptions) (*cairn.Artifact, error) {
	dl, err := c.openRanged(d, part, o)
	if err != nil {
		return nil, err
	}
	digest, err := dl.run(ctx, o)
	if err == nil {
		err = verify(dl.a, dl.a.Size, digest)
	}
	if err != nil {
		_ = dl.f.Close() // the download's error is the one to report
		if errors.Is(err, ErrVerification) {
			dl.discard()
		}
		return nil, err
	}
	err = closePart(dl.f, part)
	if err == nil {
		_ = os.Remove(rangesFile(part)) // first: a sidecar must never describe a placed file
		err = place(part, dest, o.Overwrite)
	}
	if err != nil {
		dl.discard()
		return nil, err
	}
	return dl.a, nil
}

// openRanged opens the part file for d's artifact, keeping what an
// earlier run of the same content left, or starting over (and saying so
// when that earlier run was of other content).
func (c *Client) openRanged(d *cairn.ArtifactDetail, part string, o DownloadOptions) (*rangedDownload, error) {
	a := d.Artifact
	prev := readRanges(part)
	fi, statErr := os.Stat(part)
	keep := prev != nil && prev.same(a) && statErr == nil && fi.Size() == a.Size
	if prev != nil && !keep && statErr == nil {
		notify(o.Notice, Notice{Kind: NoticeArtifactChanged,
			Text: "the artifact changed since the interrupted download; starting over"})
	}
	f, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	state := prev
	if !keep {
		state = newRangeState(a, o.rangeSize)
		err = f.Truncate(0)
	}
	if err == nil {
		err = f.Truncate(a.Size) // sparse until the ranges arrive
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("prepare %s: %w", part, err)
	}
	count := int((a.Size + state.RangeSize - 1) / state.RangeSize)
	return &rangedDownload{c: c, a: a, ttl: o.TTL, f: f, part: part, count: count, state: state,
		done: state.complete(count), url: d.GetURL, urlAt: time.Now()}, nil
}

// discard removes the part file and its sidecar.
func (dl *rangedDownload) discard() {
	_ = os.Remove(rangesFile(dl.part)) // either may be gone already
	_ = os.Remove(dl.part)
}

// run fetches the missing ranges and returns the SHA-256 of the whole
// file, hashed in order behind the writers.
func (dl *rangedDownload) run(ctx context.Context, o DownloadOptions) (string, error) {
	var need []int
	var have int64
	kept := 0
	for i, ok := range dl.done {
		if !ok {
			need = append(need, i)
			continue
		}
		kept++
		have += dl.length(i)
	}
	if kept > 0 {
		notify(o.Notice, resumedNotice("downloaded", kept, dl.count))
	}
	if err := dl.save(); err != nil {
		return "", err
	}
	fl := newFlow(ctx, have, dl.a.Size, kept, dl.count, flowOptions{
		progress: reporter(PhaseDownloading, o.Progress, o.PhaseProgress), parts: o.PartProgress, rate: o.RateLimit})
	if o.PhaseProgress != nil {
		o.PhaseProgress(PhaseDownloading, have, dl.a.Size)
	}
	h := newPrefixHasher(dl.f, dl.a.Size, dl.state.RangeSize, dl.done)
	hctx, stop := context.WithCancel(ctx)
	defer stop()
	hashed := make(chan hashResult, 1)
	go func() { hashed <- h.run(hctx) }()
	fz := &flusher{f: dl.f, part: dl.part, kick: make(chan struct{}, 1)}
	fetched := make(chan struct{})
	flushed := make(chan error, 1)
	go func() { flushed <- fz.run(fetched) }()
	err := eachParallel(ctx, o.parallel(), need, func(ctx context.Context, i int) error {
		if err := dl.fetchRange(ctx, fl, i); err != nil {
			return err
		}
		h.complete(i)
		fz.add(dl.length(i))
		return dl.mark(i)
	})
	close(fetched)
	if ferr := <-flushed; err == nil {
		err = ferr
	}
	if err != nil {
		stop()
		<-hashed
		return "", err
	}
	res := <-hashed
	if res.err != nil {
		return "", res.err
	}
	fl.finish()
	return res.sum, nil
}

// length is the size of range i.
func (dl *rangedDownload) length(i int) int64 {
	off := int64(i) * dl.state.RangeSize
	return min(dl.state.RangeSize, dl.a.Size-off)
}

// mark records range i complete in the sidecar. The bytes may still be
// only in the page cache: they survive the process (Ctrl-C, a kill), and a
// crash of the machine that loses them fails the end-to-end verification.
func (dl *rangedDownload) mark(i int) error {
	dl.mu.Lock()
	dl.done[i] = true
	dl.mu.Unlock()
	return dl.save()
}

// flushBytes is how many bytes a ranged download writes between two
// flushes of the part file to disk (fsync): flushing while the ranges
// arrive overlaps it with the transfer, instead of one long flush before
// the rename.
const flushBytes = 64 << 20

// flusher flushes the part file in the background as ranges complete.
type flusher struct {
	f     *os.File
	part  string
	kick  chan struct{} // buffered: a flush is due
	mu    sync.Mutex
	bytes int64 // written since the last flush was asked for
}

// add counts n bytes written, and asks for a flush once enough gathered.
func (fz *flusher) add(n int64) {
	fz.mu.Lock()
	fz.bytes += n
	due := fz.bytes >= flushBytes
	if due {
		fz.bytes = 0
	}
	fz.mu.Unlock()
	if due {
		select {
		case fz.kick <- struct{}{}:
		default: // one is due already
		}
	}
}

// run flushes when asked until fetched is closed; it returns the first
// failure.
func (fz *flusher) run(fetched <-chan struct{}) error {
	for {
		select {
		case <-fz.kick:
			if err := fz.f.Sync(); err != nil {
				return fmt.Errorf("flush %s: %w", fz.part, err)
			}
		case <-fetched:
			return nil
		}
	}
}

// save writes the sidecar atomically.
func (dl *rangedDownload) save() error {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	dl.state.setRuns(dl.done)
	return writeJSONFile(rangesFile(dl.part), dl.state)
}

// fetchRange GETs range i into the part file at its offset. A failure
// another attempt may not see is tried again, with a fresh URL, up to
// partAttempts times.
func (dl *rangedDownload) fetchRange(ctx context.Context, fl *flow, i int) error {
	wait := termkit.Retry()
	fresh := false
	for attempt := 1; ; attempt++ {
		url, err := dl.getURL(ctx, fresh)
		if err != nil {
			return err
		}
		err = dl.getRange(ctx, fl, url, i)
		if err == nil {
			fl.partDone()
			return nil
		}
		if attempt == partAttempts || !partRetryable(ctx, err) {
			return fmt.Errorf("download range %d of %d of artifact %s: %w", i+1, dl.count, dl.a.ID, err)
		}
		if err := sleep(ctx, wait.NextBackOff()); err != nil {
			return err
		}
		fresh = true
	}
}

// getRange is one attempt at range i; the bytes of a failed one are taken
// back from the flow.
func (dl *rangedDownload) getRange(ctx context.Context, fl *flow, url string, i int) error {
	off, n := int64(i)*dl.state.RangeSize, dl.length(i)
	resp, err := dl.c.fetch(ctx, url, fmt.Sprintf("bytes=%d-%d", off, off+n-1))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || resp.ContentLength != n {
		return &cairn.Error{Reason: cairn.ReasonStoreUnavailable, Detail: fmt.Sprintf(
			"the object store answered a range of %d bytes with HTTP %d and %d bytes", n, resp.StatusCode, resp.ContentLength)}
	}
	body := fl.reader(io.LimitReader(resp.Body, n))
	got, err := io.CopyBuffer(io.NewOffsetWriter(dl.f, off), body, make([]byte, ioBufferBytes))
	if err == nil && got != n {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		body.undo()
		if _, isWrite := errors.AsType[*os.PathError](err); isWrite {
			return fmt.Errorf("write %s: %w", dl.part, err)
		}
		return storeTransportError(ctx, "download from", url, err)
	}
	return nil
}

// getURL is the presigned GET, asked for again when it is old or fresh
// says the last one failed. A fresh URL for other content (the artifact
// was replaced meanwhile) fails the download: its ranges would not fit.
func (dl *rangedDownload) getURL(ctx context.Context, fresh bool) (string, error) {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	refresh := urlRefresh
	if dl.ttl > 0 {
		refresh = min(refresh, max(dl.ttl/2, time.Second))
	}
	if !fresh && time.Since(dl.urlAt) < refresh {
		return dl.url, nil
	}
	d, err := dl.c.GetArtifact(ctx, dl.a.ID, cairn.ArtifactGet{Presign: true, TTL: dl.ttl})
	if err != nil {
		return "", err
	}
	if !dl.state.same(d.Artifact) {
		return "", fmt.Errorf("artifact %s changed during the download; download it again", dl.a.ID)
	}
	dl.url, dl.urlAt = d.GetURL, time.Now()
	return dl.url, nil
}

// prefixHasher hashes a file in order while ranges of it complete in any
// order: it reads the contiguous prefix of complete ranges right behind
// the writers, mostly from the page cache, so verifying costs no second
// pass over the disk.
type prefixHasher struct {
	r         io.ReaderAt
	size      int64
	rangeSize int64
	wake      chan struct{} // a range completed

	mu   sync.Mutex
	done []bool
	next int // the first range not complete
}

type hashResult struct {
	sum string
	err error
}

func newPrefixHasher(r io.ReaderAt, size, rangeSize int64, done []bool) *prefixHasher {
	h := &prefixHasher{r: r, size: size, rangeSize: rangeSize, wake: make(chan struct{}, 1), done: append([]bool(nil), done...)}
	h.advance()
	return h
}

// complete records range i complete.
func (h *prefixHasher) complete(i int) {
	h.mu.Lock()
	h.done[i] = true
	h.advance()
	h.mu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
}

func (h *prefixHasher) advance() {
	for h.next < len(h.done) && h.done[h.next] {
		h.next++
	}
}

// ready is the length of the complete prefix.
func (h *prefixHasher) ready() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return min(h.size, int64(h.next)*h.rangeSize)
}

// run hashes the whole file as it becomes ready, until ctx ends.
func (h *prefixHasher) run(ctx context.Context) hashResult {
	sum := sha256.New()
	buf := make([]byte, hashBuffer)
	var hashed int64
	for hashed < h.size {
		ready := h.ready()
		if ready == hashed {
			select {
			case <-h.wake:
				continue
			case <-ctx.Done():
				return hashResult{err: context.Cause(ctx)}
			}
		}
		n, err := io.CopyBuffer(sum, io.NewSectionReader(h.r, hashed, ready-hashed), buf)
		hashed += n
		if err != nil {
			return hashResult{err: fmt.Errorf("hash the part file: %w", err)}
		}
	}
	return hashResult{sum: base64.StdEncoding.EncodeToString(sum.Sum(nil))}
}
