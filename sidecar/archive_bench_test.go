package sidecar

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/flate"
	"github.com/stretchr/testify/require"
)

// The benchmarks pack and unpack a generated tree through a local store
// and compare with the shell pipelines the product targets name:
// `tar czf - DIR | curl -T - URL` and `curl URL | tar xzf -` (and zip's
// `zip -r - . | curl -T -`, `curl -o; unzip`). The tree is
// CAIRN_BENCH_MB MiB (default 256; the product target is 1024) in files of
// about 100 KiB, two thirds text-like, one third incompressible, on tmpfs
// when there is one. They report MB/s of tree bytes for both sides and the
// ratio (x-tar: ≥ 0.9 is the target).
//
//	go test ./sidecar/ -run '^$' -bench 'Pack|Unpack' -benchtime 2x

// benchTree generates the tree for one benchmark, removed when it ends.
func benchTree(b *testing.B) string {
	b.Helper()
	mb := 256
	if s := os.Getenv("CAIRN_BENCH_MB"); s != "" {
		v, err := strconv.Atoi(s)
		require.NoError(b, err, "CAIRN_BENCH_MB")
		mb = v
	}
	base, err := os.MkdirTemp("/dev/shm", "cairn-bench-")
	if err != nil {
		base = b.TempDir()
	} else {
		b.Cleanup(func() { os.RemoveAll(base) })
	}
	require.NoError(b, writeBenchTree(filepath.Join(base, "ws", "tree"), int64(mb)<<20))
	return base
}

// writeBenchTree writes total bytes in ~100 KiB files, 100 to a directory.
func writeBenchTree(root string, total int64) error {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("the a of to and in is it that for on was with he as I his be at by had not are but from or have an they which one you were her all she there would their we him been has when who will more no if out so said what up its about into than them can only other new some could time these two may then do first any my now such like our over man me even most made after also did many before must through back years where much your way well down should because each just those people how too little state good very make world still own see men work long get here between both life being under never day same another know while last might us great old year off come since against go came right used take three")
	text := func(n int) []byte {
		var sb strings.Builder
		for sb.Len() < n {
			sb.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(12) == 0 {
				sb.WriteString(".\n")
			} else {
				sb.WriteByte(' ')
			}
		}
		return []byte(sb.String()[:n])
	}
	for i := 0; total > 0; i++ {
		n := min(total, int64(50<<10+rng.IntN(100<<10)))
		total -= n
		var data []byte
		if i%3 == 2 {
			data = make([]byte, n)
			for j := range data {
				data[j] = byte(rng.Uint32())
			}
		} else {
			data = text(int(n))
		}
		p := filepath.Join(root, fmt.Sprintf("d%03d", i/100), fmt.Sprintf("f%05d", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// benchSetup returns the tree's volume, path and size.
func benchSetup(b *testing.B) (volume, string, int64) {
	b.Helper()
	base := benchTree(b)
	v := volume{base: base, ws: filepath.Join(base, "ws")}
	src := filepath.Join(v.ws, "tree")
	return v, src, treeBytes(b, src)
}

// report prints ours against the baseline.
func report(b *testing.B, treeSize int64, ours, base time.Duration, baseName string) {
	b.Helper()
	mb := float64(treeSize) / 1e6
	b.ReportMetric(mb/ours.Seconds(), "MB/s")
	b.ReportMetric(mb/base.Seconds(), baseName+"-MB/s")
	b.ReportMetric(base.Seconds()/ours.Seconds(), "x-"+baseName)
	b.ReportMetric(0, "ns/op")
}

// shell runs a pipeline and returns how long it took.
func shell(b *testing.B, dir, script string) time.Duration {
	b.Helper()
	cmd := exec.Command("sh", "-ec", script)
	cmd.Dir = dir
	start := time.Now()
	out, err := cmd.CombinedOutput()
	require.NoError(b, err, "%s: %s", script, out)
	return time.Since(start)
}

// packOnce packs src at level to the bucket and returns how long it took.
func packOnce(b *testing.B, bk *bucket, src, format string, level int) (time.Duration, Result) {
	b.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	talk := newConversation(inR, outW)
	go answerNeeds(outR, inW, grantFor(bk))
	dir, err := os.Open(src)
	require.NoError(b, err)
	defer dir.Close()
	job := packJob{source: src, format: format, limit: 1 << 40, partSize: 16 << 20, level: level}
	start := time.Now()
	res := job.run(dir, src, talk, nil)
	took := time.Since(start)
	_ = outW.Close() // a pipe's Close never fails
	require.True(b, res.OK, res.ErrorText())
	return took, res
}

// answerNeeds answers every Need line read from needs with a Grant.
func answerNeeds(needs io.Reader, grants *io.PipeWriter, grant func(Need) Grant) {
	defer func() { _ = grants.Close() }() // a pipe's Close never fails
	dec := newConversation(needs, io.Discard).in
	for {
		line, err := dec.ReadSlice('\n')
		if err != nil {
			return
		}
		var n Need
		if json.Unmarshal(line, &n) != nil {
			return
		}
		if _, err := grants.Write(append(mustJSONBytes(grant(n)), '\n')); err != nil {
			return
		}
	}
}

// BenchmarkPack packs the tree at the fastest deflate level, at packLevel
// and at its neighbours, and runs the shell baselines beside it.
func BenchmarkPack(b *testing.B) {
	v, src, size := benchSetup(b)
	_ = v
	bk := startBucket(b)
	bk.loose, bk.discard = true, true
	for _, format := range []string{FormatTarGz, FormatZip} {
		for _, level := range []int{flate.BestSpeed, packLevel - 1, packLevel, packLevel + 1} {
			b.Run(fmt.Sprintf("%s/level=%d", format, level), func(b *testing.B) {
				var ours, tarTook, zipTook time.Duration
				for range b.N {
					took, _ := packOnce(b, bk, src, format, level)
					ours += took
					tarTook += shell(b, src, "tar czf - . | curl -sS -f -T - '"+bk.keyURL("baseline")+"'")
					if format == FormatZip {
						zipTook += shell(b, src, "zip -qr - . | curl -sS -f -T - '"+bk.keyURL("baseline")+"'")
					}
				}
				report(b, size, ours, tarTook, "tar")
				if format == FormatZip {
					b.ReportMetric(zipTook.Seconds()/ours.Seconds(), "x-zip")
				}
			})
		}
	}
}

// BenchmarkUnpack unpacks the tree packed by pack and runs the shell
// baselines on the same archive.
func BenchmarkUnpack(b *testing.B) {
	v, src, size := benchSetup(b)
	bk := startBucket(b)
	for _, format := range []string{FormatTarGz, FormatZip} {
		b.Run(format, func(b *testing.B) {
			bk.loose, bk.discard = false, false
			_, res := packOnce(b, bk, src, format, packLevel)
			var archive []byte
			for i := 1; i <= max(res.Parts, 1); i++ {
				n := Need{Need: NeedPart, Number: i}
				if res.Parts == 0 {
					n = Need{Need: NeedObject}
				}
				archive = append(archive, bk.object(needKey(n))...)
			}
			url := bk.keep("archive", archive)
			scratch := filepath.Join(v.base, "scratch")
			var ours, base time.Duration
			for i := range b.N {
				target := filepath.Join(v.ws, "out"+strconv.Itoa(i))
				vars := unpackVars(v, url, target, format)
				vars[EnvArchiveSHA256] = res.SHA256B64
				vars[EnvMaxEntries] = "1000000" // a tree of 10 000 files has more entries, with its directories
				start := time.Now()
				r := unpack(env(vars), strings.NewReader(""), io.Discard)
				ours += time.Since(start)
				require.True(b, r.OK, r.ErrorText())
				require.NoError(b, os.RemoveAll(target))
				require.NoError(b, os.MkdirAll(scratch, 0o755))
				if format == FormatTarGz {
					base += shell(b, scratch, "curl -sS -f '"+url+"' | tar xzf -")
				} else {
					base += shell(b, scratch, "curl -sS -f -o ../a.zip '"+url+"' && unzip -q ../a.zip && rm ../a.zip")
				}
				require.NoError(b, os.RemoveAll(scratch))
			}
			name := "tar"
			if format == FormatZip {
				name = "unzip"
			}
			report(b, size, ours, base, name)
		})
	}
}
