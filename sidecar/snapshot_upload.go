package sidecar

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"syscall"

	"github.com/klauspost/compress/gzip"
)

// uploader sends a snapshot's content and manifest. Each missing digest
// goes up once: alone when its file is over the bundle bound, else packed
// into the bundle being filled, sent when full and at the end. Every file
// is read again for its upload, and its bytes must still hash to the
// digest the walk recorded: the manifest never names content other than
// what went to the store.
type uploader struct {
	talk          *conversation
	client        *http.Client
	dir           *os.File // the mount root
	display       string
	bundleFileMax int64
	read          *progress // the bytes read to upload, when asked

	bundle   []byte // at most BundleMaxBytes, allocated when first needed
	members  []BundleMember
	uploaded int64
	status   int // the store's answer to a failed upload
}

// contents asks, HaveBatch digests at a time, which the store lacks, and
// uploads those.
func (u *uploader) contents(w *snapWalk) *failure {
	for start := 0; start < len(w.order); start += HaveBatch {
		batch := w.order[start:min(start+HaveBatch, len(w.order))]
		missing, f := u.have(batch)
		if f != nil {
			return f
		}
		for _, i := range missing {
			if f := u.send(batch[i], w.contents[batch[i]]); f != nil {
				return f
			}
		}
	}
	return u.flush()
}

// have asks which of digests the store lacks, and checks the answer:
// indexes into digests, each once, returned in order.
func (u *uploader) have(digests []string) ([]int, *failure) {
	what := fmt.Sprintf("which of %d contents the store lacks", len(digests))
	g, f := u.talk.exchange(Need{Need: NeedHave, Digests: digests}, what)
	if f != nil {
		return nil, f
	}
	missing := append([]int(nil), g.Missing...)
	sort.Ints(missing)
	for i, m := range missing {
		if m < 0 || m >= len(digests) || (i > 0 && missing[i-1] == m) {
			return nil, fail(ReasonEnvInvalid, "the answer for %s names content it was not asked about", what)
		}
	}
	return missing, nil
}

// send uploads one missing content.
func (u *uploader) send(digest string, c *content) *failure {
	if c.size > u.bundleFileMax {
		return u.blob(digest, c)
	}
	return u.bundled(digest, c)
}

// blob uploads a file as one object, streamed from the file.
func (u *uploader) blob(digest string, c *content) *failure {
	file, f := u.open(c)
	if f != nil {
		return f
	}
	defer file.Close()
	sha := b64Digest(digest)
	grant, f := u.talk.ask(Need{Need: NeedBlob, Size: c.size, SHA256B64: sha}, fmt.Sprintf("the content of '%s'", u.shown(c.path)))
	if f != nil {
		return f
	}
	want, _ := hex.DecodeString(digest) // the walk made it
	body := &checkedReader{r: u.read.reader(file), left: c.size, h: sha256.New(), want: want}
	f, u.status = putReader(u.client, grant.URL, body, c.size, sha)
	switch {
	case body.err != nil:
		u.status = 0
		return u.readFailure(c, body.err)
	case f != nil:
		return f
	}
	u.uploaded += c.size
	return nil
}

// bundled appends a file to the bundle, sending the bundle first when the
// file does not fit.
func (u *uploader) bundled(digest string, c *content) *failure {
	if len(u.members) == BundleMaxMembers || int64(len(u.bundle))+c.size > BundleMaxBytes {
		if f := u.flush(); f != nil {
			return f
		}
	}
	if u.bundle == nil {
		u.bundle = make([]byte, 0, BundleMaxBytes)
	}
	file, f := u.open(c)
	if f != nil {
		return f
	}
	defer file.Close()
	at := len(u.bundle)
	u.bundle = u.bundle[:at+int(c.size)]
	want, _ := hex.DecodeString(digest) // the walk made it
	r := &checkedReader{r: u.read.reader(file), left: c.size, h: sha256.New(), want: want}
	if _, err := io.ReadFull(r, u.bundle[at:]); err != nil {
		u.bundle = u.bundle[:at]
		return u.readFailure(c, r.err)
	}
	u.members = append(u.members, BundleMember{SHA256: digest, Offset: int64(at), Size: c.size})
	return nil
}

// flush sends the bundle, if it holds anything.
func (u *uploader) flush() *failure {
	if len(u.members) == 0 {
		return nil
	}
	sum := sha256.Sum256(u.bundle)
	sha := base64.StdEncoding.EncodeToString(sum[:])
	need := Need{Need: NeedBundle, Size: int64(len(u.bundle)), SHA256B64: sha, Members: u.members}
	grant, f := u.talk.ask(need, fmt.Sprintf("a bundle of %d files", len(u.members)))
	if f != nil {
		return f
	}
	if f, u.status = putBytes(u.client, grant.URL, u.bundle, sha); f != nil {
		return f
	}
	u.uploaded += int64(len(u.bundle))
	u.bundle, u.members = u.bundle[:0], nil
	return nil
}

// manifest writes the manifest, uploads it and returns its digest.
func (u *uploader) manifest(entries []ManifestEntry) (string, *failure) {
	data, f := encodeManifest(entries)
	if f != nil {
		return "", f
	}
	sum := sha256.Sum256(data)
	sha := base64.StdEncoding.EncodeToString(sum[:])
	grant, f := u.talk.ask(Need{Need: NeedManifest, Size: int64(len(data)), SHA256B64: sha}, "the manifest")
	if f != nil {
		return "", f
	}
	if f, u.status = putBytes(u.client, grant.URL, data, sha); f != nil {
		return "", f
	}
	return sha, nil
}

// encodeManifest writes entries as gzip-compressed JSON lines, in order,
// within MaxManifestBytes.
func encodeManifest(entries []ManifestEntry) ([]byte, *failure) {
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, packLevel) // the level is one of flate's
	enc := json.NewEncoder(gz)
	enc.SetEscapeHTML(false)
	tooLarge := fail(ReasonSnapshotTooLarge, "the manifest of the volume's %d entries is over %d bytes compressed", len(entries), MaxManifestBytes)
	for i := range entries {
		if err := enc.Encode(&entries[i]); err != nil {
			return nil, fail(ReasonEnvInvalid, "cannot encode the manifest: %v", err)
		}
		if buf.Len() > MaxManifestBytes {
			return nil, tooLarge
		}
	}
	if err := gz.Close(); err != nil {
		return nil, fail(ReasonEnvInvalid, "cannot encode the manifest: %v", err)
	}
	if buf.Len() > MaxManifestBytes {
		return nil, tooLarge
	}
	return buf.Bytes(), nil
}

// open opens a file again for its upload, by its path from the mount
// root, never through a symlink: each directory on the way is opened with
// O_NOFOLLOW, and the file only once an O_PATH handle showed it regular.
func (u *uploader) open(c *content) (*os.File, *failure) {
	file, err := openBelow(int(u.dir.Fd()), c.path)
	switch {
	case err == nil:
		return file, nil
	case replacedOrGone(err):
		return nil, fail(ReasonSourceChanged, "'%s' was replaced or removed while the snapshot was taken", u.shown(c.path))
	}
	return nil, fail(ReasonSourceUnreadable, "failed to read '%s': %s", u.shown(c.path), errno(err))
}

// openBelow opens the regular file rel below the directory dirfd.
func openBelow(dirfd int, rel string) (*os.File, error) {
	parts := strings.Split(rel, "/")
	fd, own := dirfd, false
	defer func() {
		if own {
			syscall.Close(fd)
		}
	}()
	for _, p := range parts[:len(parts)-1] {
		next, err := openDirNoFollow(fd, p)
		if err != nil {
			return nil, err
		}
		if own {
			syscall.Close(fd)
		}
		fd, own = next, true
	}
	last := parts[len(parts)-1]
	st, err := statAt(fd, last)
	if err != nil {
		return nil, err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, errReplaced
	}
	return openAt(fd, last, 0, &st)
}

func (u *uploader) shown(rel string) string { return u.display + "/" + rel }

// readFailure describes a file whose bytes are no longer the ones hashed,
// or that failed to read.
func (u *uploader) readFailure(c *content, err error) *failure {
	if err == nil || errors.Is(err, errChanged) {
		return fail(ReasonSourceChanged, "the file '%s' changed between being hashed and being uploaded", u.shown(c.path))
	}
	return fail(ReasonSourceUnreadable, "failed to read '%s': %s", u.shown(c.path), errno(err))
}

// checkedReader yields exactly the left bytes a file had when it was
// hashed, and fails the read that would complete them unless they hash to
// the digest recorded and nothing follows them: a file that changed since
// never completes its PUT. err keeps why it failed, for the caller to
// tell from the PUT's own failure.
type checkedReader struct {
	r    io.Reader
	left int64
	h    hash.Hash
	want []byte
	err  error
}

func (c *checkedReader) Read(p []byte) (int, error) {
	if c.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	c.left -= int64(n)
	switch {
	case c.left > 0 && errors.Is(err, io.EOF):
		return n, c.failed(errChanged)
	case err != nil && !errors.Is(err, io.EOF):
		return n, c.failed(err)
	case c.left > 0:
		return n, nil
	}
	var probe [1]byte
	if m, _ := c.r.Read(probe[:]); m > 0 || !bytes.Equal(c.h.Sum(nil), c.want) {
		return 0, c.failed(errChanged)
	}
	return n, nil
}

func (c *checkedReader) failed(err error) error {
	c.err = err
	return err
}
