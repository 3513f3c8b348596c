package sidecar

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPackObject packs a small tree: it fits the first part, so it goes up
// as one object, bound to its size and digest, and the result describes
// it.
func TestPackObject(t *testing.T) {
	t.Parallel()
	for _, format := range []string{FormatTarGz, FormatZip} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			v := newVolume(t)
			v.mkdir(t, "src")
			v.write(t, "src/hello", helloData, 0o644)
			b := startBucket(t)
			p := runPack(t, packVars(v, v.at("src"), format), b, grantFor(b))
			require.Equal(t, ExitOK, p.code, p.line)
			require.Len(t, p.needs, 1)
			require.Equal(t, Need{Need: NeedObject, Size: int64(len(p.archive)), SHA256B64: sum(p.archive)}, p.needs[0])
			require.Equal(t, []bucketPut{{path: "/bucket/pack/object", size: int64(len(p.archive)), checksum: sum(p.archive)}}, b.putsSoFar())
			res := decodeLine(t, p.line)
			require.Zero(t, res.Parts)
			require.Equal(t, 1, res.Entries)
			require.Equal(t, sum(p.archive), res.SHA256B64)
			require.NotContains(t, p.line, `"parts"`)
			requireNoURL(t, p.line, b.keyURL("pack/object"))
		})
	}
}

// TestPackMultipart packs more incompressible bytes than one part holds:
// every part but the last has exactly CAIRN_PART_SIZE bytes, each Need
// carries its part's size and digest, numbered from 1, and the parts make
// the archive the result describes, which unpacks to the source.
func TestPackMultipart(t *testing.T) {
	t.Parallel()
	for _, format := range []string{FormatTarGz, FormatZip} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			v := newVolume(t)
			v.mkdir(t, "src")
			noise := make([]byte, 12<<20)
			_, _ = rand.Read(noise)
			v.write(t, "src/a.bin", noise[:7<<20], 0o644)
			v.write(t, "src/b.bin", noise[7<<20:], 0o600)
			b := startBucket(t)
			vars := packVars(v, v.at("src"), format)
			vars[EnvPartSize] = strconv.Itoa(MinPartSize)
			p := runPack(t, vars, b, grantFor(b))
			require.Equal(t, ExitOK, p.code, p.line)
			require.Len(t, p.needs, 3, "12 MiB of noise and the archive's overhead make three 5 MiB parts")
			rest := p.archive
			for i, n := range p.needs {
				require.Equal(t, NeedPart, n.Need)
				require.Equal(t, i+1, n.Number)
				if i < len(p.needs)-1 {
					require.Equal(t, int64(MinPartSize), n.Size)
				}
				part := b.object(needKey(n))
				require.Equal(t, n.Size, int64(len(part)))
				h := sha256.Sum256(part)
				require.Equal(t, base64.StdEncoding.EncodeToString(h[:]), n.SHA256B64)
				rest = rest[len(part):]
			}
			require.Empty(t, rest)
			res := decodeLine(t, p.line)
			require.Equal(t, 3, res.Parts)
			require.Equal(t, int64(len(p.archive)), *res.Size)
			require.Equal(t, sum(p.archive), res.SHA256B64)

			v.mkdir(t, "out")
			vars = unpackVars(v, b.keep("archive", p.archive), v.at("out/src"), format)
			vars[EnvArchiveSHA256] = res.SHA256B64
			line, code := runLine(t, []string{CommandUnpack}, vars)
			require.Equal(t, ExitOK, code, line)
			require.Equal(t, noise[:7<<20], readFile(t, v.at("out/src/a.bin")))
			require.Equal(t, noise[7<<20:], readFile(t, v.at("out/src/b.bin")))
		})
	}
}

// TestPackRefused walks the source refusals: nothing reaches the store.
func TestPackRefused(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	v.mkdir(t, "fifo")
	v.mkfifo(t, "fifo/pipe")
	v.mkdir(t, "sock")
	v.socket(t, "sock/s")
	v.mkdir(t, "dev")
	v.mkdir(t, "dev/deep")
	if err := syscall.Mknod(v.at("dev/deep/null"), syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		skipUnlessCI(t, "mknod needs CAP_MKNOD: %v", err)
	}
	v.write(t, "file", helloData, 0o644)
	v.symlink(t, "../outside", "escape")
	v.symlink(t, "fifo", "fifo-link")
	v.mkdir(t, "odd")
	v.write(t, "odd/bad\x1bname", helloData, 0o644)
	for _, tc := range []struct {
		name, source, reason, message string
	}{
		{"FIFO", v.at("fifo"), ReasonSourceNotRegular,
			"'" + v.at("fifo/pipe") + "' in the source directory is a named pipe (FIFO), which an archive cannot hold; only regular files, directories and symlinks are packed"},
		{"Socket", v.at("sock"), ReasonSourceNotRegular,
			"'" + v.at("sock/s") + "' in the source directory is a socket, which an archive cannot hold; only regular files, directories and symlinks are packed"},
		{"Device", v.at("dev"), ReasonSourceNotRegular,
			"'" + v.at("dev/deep/null") + "' in the source directory is a character device, which an archive cannot hold; only regular files, directories and symlinks are packed"},
		{"LinkToFIFODir", v.at("fifo-link"), ReasonSourceNotRegular,
			"'" + v.at("fifo/pipe") + "' in the source directory is a named pipe (FIFO), which an archive cannot hold; only regular files, directories and symlinks are packed"},
		{"ControlCharacter", v.at("odd"), ReasonArchiveUnsafePath,
			strconv.Quote(v.at("odd/bad\x1bname")) + " in the source directory cannot be packed: its name holds a control character, which cairn refuses when it unpacks"},
		{"File", v.at("file"), ReasonSourceNotDir, "source path '" + v.at("file") + "' is not a directory; pack archives a directory"},
		{"Missing", v.at("nothing"), ReasonSourceNotFound, "source directory '" + v.at("nothing") + "' does not exist"},
		{"Outside", v.at("escape"), ReasonPathOutsideMount,
			"source path resolves to '" + v.outside + "', which is outside the workspace volume mounted at '" + v.ws + "'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := startBucket(t)
			p := runPack(t, packVars(v, tc.source, FormatTarGz), b, grantFor(b))
			require.Equal(t, failureLine(tc.reason, tc.message, 0), p.line)
			require.Equal(t, ExitFailure, p.code)
			require.Empty(t, b.putsSoFar())
		})
	}
}

// TestPackMountRoot packs the whole volume: the mount root is a directory
// like any other, and its symlinks stay links, whatever they point at.
func TestPackMountRoot(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	v.write(t, "hello", helloData, 0o644)
	v.symlink(t, "../outside/secret", "secret-link")
	b := startBucket(t)
	p := runPack(t, packVars(v, v.ws, FormatTarGz), b, grantFor(b))
	require.Equal(t, ExitOK, p.code, p.line)
	require.Equal(t, v.ws, decodeLine(t, p.line).UploadedPath)
	got := tarListing(t, p.archive)
	require.Equal(t, []string{"hello:0:", "secret-link:2:../outside/secret"}, got)
	require.NotContains(t, string(p.archive), "top secret")
}

// tarListing lists a tar.gz as name:type:link.
func tarListing(t *testing.T, archive []byte) []string {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(archive))
	require.NoError(t, err)
	tr := tar.NewReader(gz)
	var out []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		out = append(out, hdr.Name+":"+string(hdr.Typeflag)+":"+hdr.Linkname)
	}
}

// TestPackGrantRefused: a Grant carrying an error ends the pack with
// sidecar_rejected, quoting it, and nothing is sent.
func TestPackGrantRefused(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	v.mkdir(t, "src")
	v.write(t, "src/hello", helloData, 0o644)
	b := startBucket(t)
	p := runPack(t, packVars(v, v.at("src"), FormatZip), b, func(Need) Grant {
		return Grant{Error: "the artifact was deleted meanwhile"}
	})
	require.Equal(t, failureLine(ReasonSidecarRejected,
		"the server refused to grant an upload of the archive: the artifact was deleted meanwhile", 0), p.line)
	require.Equal(t, ExitFailure, p.code)
	require.Empty(t, b.putsSoFar())
}

// TestPackStoreRefused: a store's refusal of a part is the store's
// failure, with its status.
func TestPackStoreRefused(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	v.mkdir(t, "src")
	v.write(t, "src/hello", helloData, 0o644)
	b := startBucket(t)
	b.refuse = http.StatusForbidden
	p := runPack(t, packVars(v, v.at("src"), FormatTarGz), b, grantFor(b))
	require.Equal(t, failureLine(ReasonStoreRejected, "the object store rejected the upload (HTTP 403)", 403), p.line)
}

// TestPackTooLarge: an archive growing past CAIRN_MAX_SIZE is refused.
func TestPackTooLarge(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	v.mkdir(t, "src")
	noise := make([]byte, 64<<10)
	_, _ = rand.Read(noise)
	v.write(t, "src/noise", noise, 0o644)
	b := startBucket(t)
	vars := packVars(v, v.at("src"), FormatTarGz)
	vars[EnvMaxSize] = "10000"
	p := runPack(t, vars, b, grantFor(b))
	require.Equal(t, failureLine(ReasonObjectTooLarge, "the archive grew past the 10000 byte cap of an artifact packed from a volume", 0), p.line)
	require.Empty(t, b.putsSoFar())
}

// TestPackEnv refuses a bad format or part size before reading anything.
func TestPackEnv(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	b := startBucket(t)
	for _, tc := range []struct{ key, value, message string }{
		{EnvFormat, "rar", "CAIRN_FORMAT must be tar.gz or zip"},
		{EnvPartSize, "1048576", "CAIRN_PART_SIZE must be a decimal number of bytes from 5242880 to 33554432"},
		{EnvMaxSize, "-1", "CAIRN_MAX_SIZE must be a non-negative decimal integer"},
	} {
		vars := packVars(v, v.ws, FormatTarGz)
		vars[tc.key] = tc.value
		p := runPack(t, vars, b, grantFor(b))
		require.Equal(t, failureLine(ReasonEnvInvalid, tc.message, 0), p.line)
	}
}

// TestPackSourceChanged catches a file that changes while it is packed:
// one that grows past the size it had when opened, and one rewritten in
// place at the same size.
func TestPackSourceChanged(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, message string
		change        func(t *testing.T, p string)
	}{
		{"Grown", "the source file '%s' changed size while it was packed", func(t *testing.T, p string) {
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			require.NoError(t, err)
			_, err = f.Write([]byte("more"))
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}},
		{"Rewritten", "the source file '%s' was modified while it was packed", func(t *testing.T, p string) {
			require.NoError(t, os.WriteFile(p, bytes.ToUpper(helloData), 0o644))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := newVolume(t)
			v.mkdir(t, "src")
			v.write(t, "src/hello", helloData, 0o644)
			dir, err := os.Open(v.at("src"))
			require.NoError(t, err)
			defer dir.Close()
			ar := newArchiver(FormatTarGz, io.Discard, packLevel)
			w := walker{visit: func(e *packEntry) *failure {
				tc.change(t, filepath.Join(v.at("src"), e.name))
				if err := ar.add(e); err != nil {
					return sourceFailure(err, e)
				}
				return nil
			}}
			f := w.walk(dir, v.at("src"))
			require.NotNil(t, f)
			require.Equal(t, ReasonSourceChanged, f.reason)
			require.Equal(t, fmtPath(tc.message, v.at("src/hello")), f.message)
		})
	}
}

func fmtPath(format, p string) string { return fail("", format, p).message }
