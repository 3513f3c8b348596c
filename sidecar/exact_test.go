package sidecar

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

// readerStyles wrap a source the ways a file or the kernel may hand it out.
var readerStyles = []struct {
	name string
	wrap func(io.Reader) io.Reader
}{
	{"Plain", func(r io.Reader) io.Reader { return r }},
	{"OneByte", iotest.OneByteReader},
	{"Half", iotest.HalfReader},
	{"EOFWithData", iotest.DataErrReader},
}

// readExact drains an exactReader over data that promises size bytes.
func readExact(style func(io.Reader) io.Reader, data []byte, size int64) ([]byte, error) {
	return io.ReadAll(&exactReader{r: style(bytes.NewReader(data)), left: size})
}

func TestExactReader(t *testing.T) {
	t.Parallel()
	data := []byte("exactly these bytes")
	for _, style := range readerStyles {
		t.Run(style.name, func(t *testing.T) {
			t.Parallel()
			t.Run("OK", func(t *testing.T) {
				got, err := readExact(style.wrap, data, int64(len(data)))
				require.NoError(t, err)
				require.Equal(t, data, got)
			})
			t.Run("ErrLonger", func(t *testing.T) {
				got, err := readExact(style.wrap, data, int64(len(data)-1))
				require.ErrorIs(t, err, errChanged)
				require.Less(t, len(got), len(data)-1, "the last bytes are withheld, so the body never completes")
			})
			t.Run("ErrShorter", func(t *testing.T) {
				got, err := readExact(style.wrap, data, int64(len(data)+1))
				require.ErrorIs(t, err, errChanged)
				require.Equal(t, data, got)
			})
		})
	}
	t.Run("ErrReadPassesThrough", func(t *testing.T) {
		t.Parallel()
		boom := errors.New("boom")
		_, err := io.ReadAll(&exactReader{r: iotest.ErrReader(boom), left: 10})
		require.ErrorIs(t, err, boom)
	})
}

// FuzzExactReader checks the invariant the upload relies on: exactly size
// bytes come out, or errChanged does and fewer than size bytes came out
// (so a fixed Content-Length is never satisfied). A zero size is sent as
// an empty body without an exactReader, so it is not fuzzed.
func FuzzExactReader(f *testing.F) {
	f.Add([]byte("hello"), uint16(5), uint8(0))
	f.Add([]byte("hello"), uint16(4), uint8(1))
	f.Add([]byte("hello"), uint16(6), uint8(2))
	f.Add([]byte{}, uint16(1), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, size uint16, style uint8) {
		if size == 0 {
			return
		}
		got, err := readExact(readerStyles[int(style)%len(readerStyles)].wrap, data, int64(size))
		if len(data) == int(size) {
			require.NoError(t, err)
			require.Equal(t, data, got)
			return
		}
		require.ErrorIs(t, err, errChanged)
		require.Less(t, len(got), int(size))
		require.Equal(t, data[:len(got)], got, "what comes out is a prefix of the file")
	})
}
