package sidecar

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServeRead reads byte ranges of regular files, the bytes following
// the reply line, and refuses everything else by type without blocking.
func TestServeRead(t *testing.T) {
	t.Parallel()
	v := newVolume(t)
	data := bytes.Repeat([]byte("0123456789abcdef"), 200) // 3200 bytes
	big := bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7}, MaxReadBytes/4)
	v.write(t, "data", data, 0o644)
	v.write(t, "big", big, 0o644)
	v.write(t, "empty", nil, 0o644)
	v.write(t, "locked", []byte("still readable by root"), 0)
	v.touch(t, "data")
	v.mkdir(t, "d")
	v.symlink(t, "data", "link")
	v.symlink(t, "d", "dirlink")
	v.symlink(t, "nowhere", "dangling")
	v.symlink(t, "loop", "loop")
	v.mkfifo(t, "fifo")
	v.socket(t, "sock")
	s := startServe(t, serveVars(v))

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		line, r := s.send(t, `{"op":"read","path":`+quote(v.ws+"//data")+`,"offset":100,"length":50}`+"\n")
		require.Equal(t, `{"ok":true,"path":`+quote(v.at("data"))+`,"file":`+
			`{"name":"data","type":"file","size":3200,"mode":"0644","mtime":"2026-01-02T03:04:05.000000006Z","etag":"`+etagAt(t, v.at("data"))+`"},"length":50}`, line)
		require.Equal(t, data[100:150], r.Data)
	})
	t.Run("OKRanges", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			rel            string
			offset, length int64
			want           []byte
		}{
			{"data", 0, 0, data},
			{"data", 0, 1, data[:1]},
			{"data", 3190, 50, data[3190:]},
			{"data", 3200, 0, nil},
			{"data", 5000, 10, nil},
			{"data", 1 << 62, 0, nil},
			{"data", math.MaxInt64, MaxReadBytes, nil},
			{"big", 0, 0, big[:MaxReadBytes]},
			{"big", 0, MaxReadBytes, big[:MaxReadBytes]},
			{"big", MaxReadBytes, 0, big[MaxReadBytes:]},
			{"big", 7, 3, big[7:10]},
			{"empty", 0, 0, nil},
			{"locked", 0, 0, []byte("still readable by root")},
		} {
			r := s.do(t, rd(v.at(tc.rel), tc.offset, tc.length))
			require.True(t, r.OK, "%s %d+%d: %s", tc.rel, tc.offset, tc.length, deref(r.Error))
			require.Equal(t, v.at(tc.rel), r.Path)
			require.Equal(t, int64(len(tc.want)), r.Length, "%s %d+%d", tc.rel, tc.offset, tc.length)
			require.True(t, bytes.Equal(tc.want, r.Data), "%s %d+%d", tc.rel, tc.offset, tc.length)
			require.Equal(t, tc.rel, r.File.Name)
			require.Equal(t, TypeFile, r.File.Type)
		}
		r := s.do(t, rd(v.at("locked"), 0, 0))
		require.Equal(t, "0000", r.File.Mode)
	})
	t.Run("ErrBounds", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			offset, length int64
			message        string
		}{
			{-1, 0, "offset -1 is negative"},
			{0, -1, "length -1 is out of bounds: 1 to 1048576, or 0 for 1048576"},
			{0, MaxReadBytes + 1, "length 1048577 is out of bounds: 1 to 1048576, or 0 for 1048576"},
		} {
			line, _ := s.send(t, `{"op":"read","path":`+quote(v.at("data"))+`,"offset":`+
				strconv.FormatInt(tc.offset, 10)+`,"length":`+strconv.FormatInt(tc.length, 10)+"}\n")
			require.Equal(t, refusalLine(ReasonEnvInvalid, tc.message), line)
		}
	})
	t.Run("ErrNotAFile", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct{ p, reason, message string }{
			{v.at("d"), ReasonPathIsDirectory, "path '" + v.at("d") + "' is a directory; list it instead of reading it"},
			{v.ws, ReasonPathIsDirectory, "path '" + v.ws + "' is a directory; list it instead of reading it"},
			{v.ws + "/", ReasonPathIsDirectory, "path '" + v.ws + "/' is a directory; list it instead of reading it"},
			{v.at("link"), ReasonPathIsSymlink, "path '" + v.at("link") + "' is a symlink, which is reported, never followed"},
			{v.at("dirlink"), ReasonPathIsSymlink, "path '" + v.at("dirlink") + "' is a symlink, which is reported, never followed"},
			{v.at("dangling"), ReasonPathIsSymlink, "path '" + v.at("dangling") + "' is a symlink, which is reported, never followed"},
			{v.at("loop"), ReasonPathIsSymlink, "path '" + v.at("loop") + "' is a symlink, which is reported, never followed"},
			{v.at("fifo"), ReasonPathNotRegular, "path '" + v.at("fifo") + "' is not a regular file"},
			{v.at("sock"), ReasonPathNotRegular, "path '" + v.at("sock") + "' is not a regular file"},
			{v.at("absent"), ReasonPathNotFound, "path '" + v.at("absent") + "' does not exist"},
			{v.at("data/x"), ReasonPathNotFound, "path '" + v.at("data/x") + "' does not exist: '" + v.at("data") + "' is not a directory"},
		} {
			line, _ := s.send(t, mustJSON(t, rd(tc.p, 0, 0))+"\n")
			require.Equal(t, refusalLine(tc.reason, tc.message), line)
		}
	})
	t.Run("ErrDevice", func(t *testing.T) {
		t.Parallel()
		v := newVolume(t)
		// The character device 1:3 is /dev/null.
		if err := syscall.Mknod(v.at("null"), syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
			if errors.Is(err, syscall.EPERM) {
				skipUnlessCI(t, "mknod needs CAP_MKNOD: %v", err)
			}
			require.NoError(t, err)
		}
		s := startServe(t, serveVars(v))
		_, r := s.send(t, mustJSON(t, rd(v.at("null"), 0, 0))+"\n")
		requireRefused(t, r, ReasonPathNotRegular)
		r = s.do(t, ls(v.at("null"), 0, ""))
		require.True(t, r.OK)
		require.Equal(t, TypeOther, r.Entries[0].Type)
	})
}
