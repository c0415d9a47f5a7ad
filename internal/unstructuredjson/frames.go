package unstructuredjson

import (
	"errors"
	"io"
)

// frameBufferSize is the frame reader's initial buffer: a few typical watch events.
const frameBufferSize = 64 << 10

// maxTokenLen is the longest token a buffer can end inside and still be valid when more
// input arrives ("false", or a "\uXXXX" escape).
const maxTokenLen = 6

var errIncomplete = errors.New("decode json: incomplete value")

// FrameReader splits a stream of JSON values (a watch response body: one event per line)
// into frames, like apimachinery's framer.NewJSONFramedReader but without decoding each
// value twice with encoding/json: every Read returns one whole value, or as much as fits
// with io.ErrShortBuffer and the rest on the following Reads. Whitespace between values is
// dropped. A stream ending between values is io.EOF, inside one io.ErrUnexpectedEOF;
// invalid JSON is an error. Frames are validated as JSON is (numbers are left to the
// decoder that converts them, as apimachinery's framer leaves them).
//
// A value that a read ends inside is scanned again from its start after the next read, so
// a value of n bytes arriving in chunks of c bytes costs n²/2c bytes of scanning: nothing
// for watch events of a few kilobytes arriving in network reads of kilobytes.
//
// A FrameReader is used by one goroutine, like the reader it wraps.
type FrameReader struct {
	r          io.ReadCloser
	buf        []byte
	start, end int    // buf[start:end] is read and not yet returned
	remaining  []byte // the rest of a frame larger than the caller's buffer
	err        error  // the wrapped reader's error, once it has returned one
}

// NewFrameReader returns a FrameReader reading r.
func NewFrameReader(r io.ReadCloser) *FrameReader {
	return &FrameReader{r: r, buf: make([]byte, frameBufferSize)}
}

// Read implements io.Reader with the frame semantics described on FrameReader.
func (f *FrameReader) Read(p []byte) (int, error) {
	if len(f.remaining) == 0 {
		frame, err := f.next()
		if err != nil {
			return 0, err
		}
		f.remaining = frame
	}
	// f.remaining aliases f.buf, which next alone changes, and only once it is consumed.
	n := copy(p, f.remaining)
	if f.remaining = f.remaining[n:]; len(f.remaining) > 0 {
		return n, io.ErrShortBuffer
	}
	return n, nil
}

// Close closes the wrapped reader.
func (f *FrameReader) Close() error { return f.r.Close() }

// next returns the next value in the stream, reading as much as it takes.
func (f *FrameReader) next() ([]byte, error) {
	for {
		for f.start < f.end && isSpace(f.buf[f.start]) {
			f.start++
		}
		final := f.err != nil // nothing more will come
		if f.start == f.end && final {
			return nil, f.err
		}
		if f.start < f.end {
			n, err := valueLen(f.buf[f.start:f.end], final)
			if err == nil {
				frame := f.buf[f.start : f.start+n]
				f.start += n
				return frame, nil
			}
			if !errors.Is(err, errIncomplete) {
				return nil, err
			}
		}
		f.fill()
	}
}

// fill reads once into the free end of the buffer, first moving the unread bytes to its
// front and doubling it when they fill it.
func (f *FrameReader) fill() {
	if f.start > 0 {
		f.end = copy(f.buf, f.buf[f.start:f.end])
		f.start = 0
	}
	if f.end == len(f.buf) {
		f.buf = append(f.buf, make([]byte, len(f.buf))...)
	}
	n, err := f.r.Read(f.buf[f.end:])
	f.end += n
	if err != nil {
		f.err = err
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// valueLen returns the length of the JSON value data starts with. Unless final (no more
// input will come), it returns errIncomplete when data may end inside the value: a value
// cut short, a token cut within its last bytes, a number or literal running to the end.
// When final, a value cut short is io.ErrUnexpectedEOF, as with encoding/json's Decoder.
func valueLen(data []byte, final bool) (int, error) {
	d := getDecoder(data, false)
	defer d.put()
	d.frame = true
	err := d.skip()
	switch {
	case err == nil && (final || d.pos < len(data) || !isScalar(data[0])):
		return d.pos, nil
	case final && d.pos >= len(data):
		return 0, io.ErrUnexpectedEOF
	case final:
		return 0, err
	case err == nil || d.pos+maxTokenLen >= len(data):
		return 0, errIncomplete
	}
	return 0, err
}

func isScalar(first byte) bool { return first != '{' && first != '[' && first != '"' }
