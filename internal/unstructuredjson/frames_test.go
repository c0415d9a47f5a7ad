package unstructuredjson_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/iotest"

	"k8s.io/apimachinery/pkg/util/framer"

	"github.com/jsinformer/jsinformer/internal/deployments"
	"github.com/jsinformer/jsinformer/internal/unstructuredjson"
)

// readFrames reads r the way apimachinery's streaming decoder does, into a buffer of size
// bytes that doubles on io.ErrShortBuffer, until the first error.
func readFrames(r io.Reader, size int) ([][]byte, error) {
	var frames [][]byte
	buf := make([]byte, size)
	for {
		base := 0
		for {
			n, err := r.Read(buf[base:])
			if errors.Is(err, io.ErrShortBuffer) {
				base += n
				buf = append(buf, make([]byte, len(buf))...)
				continue
			}
			if err != nil {
				return frames, err
			}
			base += n
			break
		}
		frames = append(frames, bytes.Clone(buf[:base]))
	}
}

// streams are watch-like streams: the corpus objects and realistic Deployments, one a line,
// other whitespace, top-level scalars.
func streams() map[string][]byte {
	var lines, deep, deploys []byte
	for _, c := range corpus {
		switch {
		case c.class == invalid:
		case len(c.doc) > 4096:
			deep = append(deep, c.doc...)
		default:
			lines = append(lines, c.doc...)
			lines = append(lines, '\n')
		}
	}
	for i := range 30 {
		deploys = append(deploys, deployments.WatchFrame("ADDED", i)...)
	}
	return map[string][]byte{
		"corpus":      lines,
		"deep":        deep,
		"deployments": deploys,
		"whitespace":  []byte(" \r\n\t{\"a\":1}  {\"b\":[2]}\n\n[3]\t\"s\\\"\" "),
		"scalars":     []byte(`1 -2.5e3 true false null "x" 12`),
		"empty":       nil,
		"only spaces": []byte(" \n "),
	}
}

// readers deliver a stream in different chunkings.
var readers = map[string]func([]byte) io.Reader{
	"whole":    func(b []byte) io.Reader { return bytes.NewReader(b) },
	"one byte": func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) },
	"halves":   func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) },
	"61 bytes": func(b []byte) io.Reader { return &chunkReader{b: b, n: 61} },
	"data+EOF": func(b []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) },
	"4 KiB":    func(b []byte) io.Reader { return &chunkReader{b: b, n: 4096} },
}

// chunkReader returns at most n bytes per Read.
type chunkReader struct {
	b []byte
	n int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.n)], r.b)
	r.b = r.b[n:]
	return n, nil
}

// errClass groups stream errors as the watch treats them: a clean end, or a broken stream.
func errClass(err error) string {
	switch {
	case errors.Is(err, io.EOF):
		return "EOF"
	case err == nil:
		return "none"
	}
	return "broken"
}

func compareFrameReaders(t *testing.T, stream []byte, newReader func([]byte) io.Reader, size int) {
	t.Helper()
	want, wantErr := readFrames(framer.NewJSONFramedReader(io.NopCloser(newReader(stream))), size)
	got, err := readFrames(unstructuredjson.NewFrameReader(io.NopCloser(newReader(stream))), size)
	if errClass(err) != errClass(wantErr) {
		t.Fatalf("stream ends with %v, apimachinery's framer with %v", err, wantErr)
	}
	if len(got) != len(want) {
		t.Fatalf("%d frames, apimachinery's framer %d", len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("frame %d is %q, apimachinery's framer %q", i, got[i], want[i])
		}
	}
}

// TestFrameReaderMatchesApimachinery splits streams into the frames apimachinery's JSON
// framer splits them into, whatever the chunking of the input and the size of the caller's
// buffer, and ends them the same way, cut anywhere.
func TestFrameReaderMatchesApimachinery(t *testing.T) {
	t.Parallel()
	for name, stream := range streams() {
		for rname, newReader := range readers {
			t.Run(name+"/"+rname, func(t *testing.T) {
				t.Parallel()
				for _, size := range []int{1, 7, 1024} {
					compareFrameReaders(t, stream, newReader, size)
				}
			})
		}
	}
	t.Run("cut", func(t *testing.T) {
		t.Parallel()
		stream := streams()["whitespace"]
		for cut := range len(stream) {
			t.Run(fmt.Sprint(cut), func(t *testing.T) {
				compareFrameReaders(t, stream[:cut], readers["halves"], 8)
			})
		}
	})
}

// TestFrameReaderRejectsInvalidJSON fails on a broken frame after returning the good ones.
func TestFrameReaderRejectsInvalidJSON(t *testing.T) {
	t.Parallel()
	for _, c := range corpus {
		if c.class != invalid || c.doc == "" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			stream := []byte(`{"ok":1}` + "\n" + c.doc + "\n" + `{"ok":2}` + "\n")
			compareFrameReaders(t, stream, readers["whole"], 1024)
		})
	}
}

// FuzzFrameReader splits any input as apimachinery's JSON framer does, read whole and in
// 61-byte chunks:
//
//	go test -run '^$' -fuzz FuzzFrameReader -fuzztime 5m ./internal/unstructuredjson/
func FuzzFrameReader(f *testing.F) {
	for _, stream := range streams() {
		f.Add(stream)
	}
	for _, c := range corpus {
		f.Add([]byte(c.doc + "\n" + c.doc))
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		compareFrameReaders(t, stream, readers["whole"], 1024)
		compareFrameReaders(t, stream, readers["61 bytes"], 7)
	})
}
