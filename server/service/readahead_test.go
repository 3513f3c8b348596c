package service

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadAhead(t *testing.T) {
	t.Parallel()
	for _, size := range []int{0, 1, readAheadChunk - 1, readAheadChunk, readAheadChunk + 1, 5*readAheadChunk + 3} {
		data := make([]byte, size)
		rng := rand.NewChaCha8([32]byte{byte(size)})
		_, _ = rng.Read(data)
		var out bytes.Buffer
		n, err := readAhead(iotestHalfReader{bytes.NewReader(data)}, &out)
		require.NoError(t, err, size)
		require.Equal(t, int64(size), n)
		require.True(t, bytes.Equal(data, out.Bytes()), "size %d copied in order", size)
	}

	t.Run("ErrRead", func(t *testing.T) {
		t.Parallel()
		boom := errors.New("store dropped the connection")
		r := io.MultiReader(bytes.NewReader(make([]byte, 3*readAheadChunk/2)), errReader{boom})
		n, err := readAhead(r, io.Discard)
		require.ErrorIs(t, err, boom)
		require.Equal(t, int64(3*readAheadChunk/2), n, "what was read before the failure was written")
	})

	t.Run("ErrWrite", func(t *testing.T) {
		t.Parallel()
		boom := errors.New("full")
		_, err := readAhead(bytes.NewReader(make([]byte, 8*readAheadChunk)), errWriter{boom})
		require.ErrorIs(t, err, boom, "and the reader goroutine stops (the race detector and leak checks see it)")
	})
}

// iotestHalfReader returns at most half of what is asked, so chunks fill
// over several reads.
type iotestHalfReader struct{ r io.Reader }

func (h iotestHalfReader) Read(p []byte) (int, error) { return h.r.Read(p[:max(1, len(p)/2)]) }

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

type errWriter struct{ err error }

func (e errWriter) Write([]byte) (int, error) { return 0, e.err }
