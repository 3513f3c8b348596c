package service

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/sidecar"
)

// manifestSummary is what the server keeps of a manifest: its counts and
// the distinct digests its files name (an empty file names none).
type manifestSummary struct {
	entries int
	bytes   int64
	digests []string
}

// readManifest reads the manifest object under key, which must hash to
// digestB64, and sums it up. A manifest that does not parse or hash is a
// corrupt snapshot.
func (s *Service) readManifest(ctx context.Context, key, digestB64 string, maxEntries int) (*manifestSummary, error) {
	body, err := s.objects.Read(ctx, key)
	if err != nil {
		return nil, &cairn.Error{Reason: cairn.ReasonStoreUnavailable, Detail: "the object store failed to read a snapshot manifest", Err: err}
	}
	defer body.Close()
	h := sha256.New()
	raw := io.TeeReader(io.LimitReader(body, sidecar.MaxManifestBytes+1), h)
	sum, err := summarize(raw, maxEntries)
	if err == nil {
		// The rest of the object, if any, is hashed too: a manifest is
		// its whole object.
		_, err = io.Copy(io.Discard, raw)
	}
	if err != nil || base64.StdEncoding.EncodeToString(h.Sum(nil)) != digestB64 {
		return nil, &cairn.Error{Reason: cairn.ReasonSnapshotCorrupt,
			Detail: "a snapshot manifest in the store does not hash to its recorded digest or does not parse", Err: err}
	}
	return sum, nil
}

// summarize parses gzip-compressed manifest lines.
func summarize(r io.Reader, maxEntries int) (*manifestSummary, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 0, 4096), sidecar.MaxManifestLine)
	out := &manifestSummary{}
	seen := map[string]bool{}
	for sc.Scan() {
		var e sidecar.ManifestEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, err
		}
		if out.entries++; out.entries > maxEntries {
			return nil, cairn.Errorf(cairn.ReasonSnapshotCorrupt, "the manifest has more than %d entries", maxEntries)
		}
		if e.Type != sidecar.ManifestFile || e.Size == 0 {
			continue
		}
		if !isHexDigest(e.SHA256) || e.Size < 0 {
			return nil, cairn.Errorf(cairn.ReasonSnapshotCorrupt, "the manifest names a file without a valid digest")
		}
		out.bytes += e.Size
		if !seen[e.SHA256] {
			seen[e.SHA256] = true
			out.digests = append(out.digests, e.SHA256)
		}
	}
	return out, sc.Err()
}
