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
// Cost is linear whatever the reads. A frame is validated as soon as it is seen, which
// finds its end when it is all there, as it mostly is. Otherwise its end is found by
// counting brackets outside strings, resuming where the last read stopped, and it is then
// validated once more; meanwhile it is validated again each time its pending part has
// doubled, so invalid JSON is reported without waiting for the frame's end. (A top-level string,
// number or literal, never a watch event, is validated whole after every read.)
//
// A FrameReader is used by one goroutine, like the reader it wraps.
type FrameReader struct {
	r          io.ReadCloser
	buf        []byte
	start, end int         // buf[start:end] is read and not yet returned
	scan       bracketScan // how far the frame at start has been looked at
	remaining  []byte      // the rest of a frame larger than the caller's buffer
	err        error       // the wrapped reader's error, once it has returned one
}

// bracketScan finds where an object or array ends without validating it, resuming across
// reads. Its positions are relative to the frame's start.
type bracketScan struct {
	pos      int // bytes looked at
	depth    int
	inString bool
	escaped  bool
	checked  int // pending bytes at the last validation of the incomplete frame
}

// advance looks at data from where it stopped and returns the frame's length once its
// brackets balance.
func (s *bracketScan) advance(data []byte) (int, bool) {
	for i := s.pos; i < len(data); i++ {
		c := data[i]
		if s.inString {
			switch {
			case s.escaped:
				s.escaped = false
			case c == '\\':
				s.escaped = true
			case c == '"':
				s.inString = false
			}
			continue
		}
		switch c {
		case '"':
			s.inString = true
		case '{', '[':
			s.depth++
		case '}', ']':
			if s.depth--; s.depth == 0 {
				s.pos = i + 1
				return i + 1, true
			}
		}
	}
	s.pos = len(data)
	return 0, false
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
			n, err := f.frameLen(final)
			if err == nil {
				frame := f.buf[f.start : f.start+n]
				f.start += n
				f.scan = bracketScan{}
				return frame, nil
			}
			if !errors.Is(err, errIncomplete) {
				return nil, err
			}
		}
		f.fill()
	}
}

// frameLen returns the length of the frame at start, validated, or errIncomplete (unless
// final) when more input is needed.
func (f *FrameReader) frameLen(final bool) (int, error) {
	data := f.buf[f.start:f.end]
	if isScalar(data[0]) {
		return valueLen(data, final)
	}
	if f.scan.checked == 0 { // first look: usually the whole frame is there
		f.scan.checked = len(data)
		if n, err := valueLen(data, final); !errors.Is(err, errIncomplete) {
			return n, err
		}
	}
	if n, ok := f.scan.advance(data); ok {
		return valueLen(data[:n], true)
	}
	if final || len(data) >= 2*f.scan.checked {
		f.scan.checked = len(data)
		return valueLen(data, final) // an error, or errIncomplete
	}
	return 0, errIncomplete
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
