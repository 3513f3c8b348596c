package sidecar

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// pack archives the directory CAIRN_SOURCE_PATH as CAIRN_FORMAT and uploads
// the archive as it is made, through the Need/Grant conversation on in and
// out (files_protocol.go). The archive is never whole in memory and never
// touches the volume. The tree is walked without following a symlink
// (links are stored as links), in a deterministic order; FIFOs, sockets
// and devices are refused with source_not_regular, a file that changes
// while read with source_changed, an archive over CAIRN_MAX_SIZE with
// object_too_large, a refused Grant with sidecar_rejected.
func pack(env Env, in io.Reader, out io.Writer) Result {
	root, bad := mountRoot(env)
	if bad != nil {
		return *bad
	}
	job, f := packJobOf(env)
	if f != nil {
		return failed(f, 0)
	}
	m, f := openMount(root)
	if f != nil {
		return failed(f, 0)
	}
	defer m.close()
	dir, rel, f := m.openSourceDir(job.source)
	if f != nil {
		return failed(f, 0)
	}
	defer dir.Close()
	talk := newConversation(in, out)
	return job.run(dir, m.display(rel), talk, startProgress(env, talk, 0))
}

// packJob is one pack's input.
type packJob struct {
	source, format  string
	limit, partSize int64
	level           int
}

func packJobOf(env Env) (packJob, *failure) {
	vals, f := requireEnv(env, EnvSourcePath, EnvFormat, EnvMaxSize, EnvPartSize)
	if f != nil {
		return packJob{}, f
	}
	job := packJob{source: vals[EnvSourcePath], format: vals[EnvFormat], level: packLevel}
	if job.format != FormatTarGz && job.format != FormatZip {
		return packJob{}, fail(ReasonEnvInvalid, "%s must be %s or %s", EnvFormat, FormatTarGz, FormatZip)
	}
	var err error
	if job.limit, err = strconv.ParseInt(vals[EnvMaxSize], 10, 64); err != nil || job.limit < 0 {
		return packJob{}, fail(ReasonEnvInvalid, "%s must be a non-negative decimal integer", EnvMaxSize)
	}
	job.partSize, err = strconv.ParseInt(vals[EnvPartSize], 10, 64)
	if err != nil || job.partSize < MinPartSize || job.partSize > MaxPartSize {
		return packJob{}, fail(ReasonEnvInvalid, "%s must be a decimal number of bytes from %d to %d", EnvPartSize, MinPartSize, MaxPartSize)
	}
	return job, nil
}

// run packs dir, whose volume path is display, and uploads the archive,
// reporting the archive's bytes as they are made to p (if not nil).
func (job packJob) run(dir *os.File, display string, talk *conversation, p *progress) Result {
	sp := newSpool(job.partSize, job.limit, talk)
	ar := newArchiver(job.format, p.writer(sp), job.level)
	entries := 0
	w := walker{visit: func(e *packEntry) *failure {
		entries++
		if err := ar.add(e); err != nil {
			return sourceFailure(err, e)
		}
		return nil
	}}
	f := w.walk(dir, display)
	if f == nil {
		if err := ar.close(); err != nil {
			f = sourceFailure(err, &packEntry{display: display})
		}
	}
	p.end()
	if f != nil {
		sp.stop()
		return failed(f, sp.status)
	}
	parts, f := sp.finish()
	if f != nil {
		return failed(f, sp.status)
	}
	size := sp.total
	return Result{OK: true, UploadedPath: display, Size: &size,
		SHA256B64: base64.StdEncoding.EncodeToString(sp.sums.sha.Sum(nil)),
		MD5:       hex.EncodeToString(sp.sums.md5.Sum(nil)), Head: sp.sums.head.b,
		Parts: parts, Entries: entries}
}

// openSourceDir resolves a pack's source like put's (every symlink of the
// path followed, the result inside the mount) and opens it; it must be a
// directory, the mount root included.
func (m *mount) openSourceDir(p string) (*os.File, string, *failure) {
	rel, f := m.resolveSource(p)
	if f != nil {
		if f.reason == ReasonSourceNotFound {
			f = fail(ReasonSourceNotFound, "source directory '%s' does not exist", p)
		}
		return nil, "", f
	}
	dir, err := m.root.OpenFile(rel, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
	switch {
	case err == nil:
		return dir, rel, nil
	case errors.Is(err, syscall.ENOTDIR):
		return nil, "", fail(ReasonSourceNotDir, "source path '%s' is not a directory; pack archives a directory", p)
	case errors.Is(err, fs.ErrNotExist):
		return nil, "", fail(ReasonSourceNotFound, "source directory '%s' does not exist", p)
	case isEscape(err):
		return nil, "", fail(ReasonPathOutsideMount, "path '%s' leads outside the workspace volume mounted at '%s'", p, m.path)
	}
	return nil, "", fail(ReasonSourceUnreadable, "failed to read source directory '%s': %v", p, describe(err))
}
