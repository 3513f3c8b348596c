package stacktest

import (
	"crypto/sha256"
	"encoding/base64"
	"io"
	"math/rand/v2"
	"os"
	"testing"
)

// RandomFile writes n pseudo-random bytes (a ChaCha8 stream keyed by seed,
// fast and incompressible) to a new file at path and returns their SHA-256
// in standard base64, as cairn records digests.
func RandomFile(t testing.TB, path string, seed byte, n int64) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(rand.NewChaCha8([32]byte{seed, 0xc4}), n)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// FileSHA256 is the SHA-256 of a file in standard base64.
func FileSHA256(t testing.TB, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}
