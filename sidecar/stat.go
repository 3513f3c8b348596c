package sidecar

import (
	"crypto/sha256"
	"encoding/base64"
	"io"
)

// chunk is the streaming unit of every read and transfer.
const chunk = 1 << 20

// HeadBytes is how much of a file's start stat returns: what MIME sniffing
// reads.
const HeadBytes = 3072

// StatResult is the line printed by stat. An env failure also carries
// "ok": false, as the first cairn's sidecar did.
type StatResult struct {
	OK           *bool   `json:"ok,omitempty"`
	ResolvedPath *string `json:"resolved_path"`
	Valid        bool    `json:"valid"`
	Size         int64   `json:"size"`
	SHA256B64    string  `json:"sha256_b64"`
	// Head is the file's first HeadBytes bytes (base64 in the line), so the
	// server can sniff the MIME type before the upload and send the bytes
	// straight to their final key.
	Head   []byte  `json:"head,omitempty"`
	Error  *string `json:"error,omitempty"`
	Reason *string `json:"reason,omitempty"`
}

// ErrorText returns the failure message, or "" when there is none.
func (r StatResult) ErrorText() string { return deref(r.Error) }

// ReasonText returns the failure reason, or "" when there is none.
func (r StatResult) ReasonText() string { return deref(r.Reason) }

func invalidStat(f *failure, resolved *string) StatResult {
	r := StatResult{ResolvedPath: resolved, Error: &f.message, Reason: &f.reason}
	if f.reason == ReasonEnvInvalid {
		r.OK = new(bool)
	}
	return r
}

// stat resolves the source, checks it is a regular file inside the mount,
// and hashes it in one streaming read.
func stat(env Env) StatResult {
	root, fail := mountRoot(env)
	if fail != nil {
		return invalidStat(&failure{reason: fail.ReasonText(), message: fail.ErrorText()}, nil)
	}
	src := env(EnvSourcePath)
	if src == "" {
		return invalidStat(&failure{reason: ReasonEnvInvalid, message: EnvSourcePath + " is not set"}, nil)
	}
	m, f := openMount(root)
	if f != nil {
		return invalidStat(f, nil)
	}
	defer m.close()
	rel, f := m.resolveSource(src)
	if f != nil {
		return invalidStat(f, nil)
	}
	resolved := m.display(rel)
	file, _, f := m.openSource(src, rel)
	if f != nil {
		return invalidStat(f, &resolved)
	}
	defer file.Close()
	h := sha256.New()
	head := &headBuffer{}
	n, err := io.CopyBuffer(io.MultiWriter(h, head), file, make([]byte, chunk))
	if err != nil {
		return invalidStat(&failure{reason: ReasonSourceUnreadable,
			message: "failed to read source file '" + src + "': " + describe(err).Error()}, &resolved)
	}
	return StatResult{ResolvedPath: &resolved, Valid: true, Size: n,
		SHA256B64: base64.StdEncoding.EncodeToString(h.Sum(nil)), Head: head.b}
}

// headBuffer keeps the first HeadBytes bytes written to it.
type headBuffer struct{ b []byte }

func (w *headBuffer) Write(p []byte) (int, error) {
	if room := HeadBytes - len(w.b); room > 0 {
		w.b = append(w.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}
